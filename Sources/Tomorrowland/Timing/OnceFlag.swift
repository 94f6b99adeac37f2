import Synchronization

/// A flag that exactly one caller can claim, from any thread (one-shot cancel propagation in
/// `timeout`, first failure in `when`).
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
