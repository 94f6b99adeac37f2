import Synchronization

/// A flag that exactly one caller can claim, from any thread: the first failure in
/// `when(fulfilled:)`, the winner in `when(first:)`.
final class OnceFlag: Sendable {
    private let claimed = Atomic<Bool>(false)

    init() {}

    /// True for the first caller only.
    func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Whether the flag was claimed.
    var isClaimed: Bool {
        claimed.load(ordering: .acquiring)
    }
}
