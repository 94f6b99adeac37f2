import Foundation

/// A counter callbacks on any thread may bump.
final class LockedCounter: @unchecked Sendable {
    // `@unchecked Sendable`: `count` is only touched while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    /// Adds one.
    func increment() {
        lock.withLock { count += 1 }
    }

    /// The count so far.
    var value: Int {
        lock.withLock { count }
    }
}
