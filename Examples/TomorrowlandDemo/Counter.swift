import Synchronization

/// A counter callbacks on any thread may bump.
///
/// An atomic, not a lock: one integer needs no critical section, and the standard library's
/// atomics are compiled into this module, so ThreadSanitizer sees them.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// Adds one.
    func increment() {
        // Releasing, paired with the acquiring load in `value`: whoever reads the count also
        // sees what the callback did before it counted.
        count.wrappingAdd(1, ordering: .releasing)
    }

    /// The count so far.
    var value: Int {
        count.load(ordering: .acquiring)
    }
}
