import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A lock for critical sections of a few dozen instructions, built on `Atomic`: the promise
/// core's per-object lock (a promise's state, its tokens, timers, retries, operations, a
/// delayed promise's handler, a Dispatch timer's work).
///
/// The library's lock for state is ``LockedValue``; this is the one exception, because every
/// promise holds one: an object that holds a `LockedValue` makes 3 allocations, one that holds
/// this lock 1, so a `LockedValue` there would take W1 from 2 to 4 allocations per link
/// (`Benchmarks/allocation-budgets.txt`) and make every `map` link much dearer, with a dearer
/// lock and unlock besides (`Benchmarks/scripts/lock-costs.sh`; the figures are in
/// `Benchmarks/README.md`, "Lock costs"). It is a stored `~Copyable` struct: no allocation of
/// its own.
///
/// Why not `Synchronization.Mutex` (no allocation either): on Linux with Swift
/// 6.3.1 its futex-based implementation is invisible to ThreadSanitizer, which then reports races
/// on everything it protects (`lock-costs.sh --tsan`); the atomic operations here are
/// instrumented, so TSan sees the happens-before edges.
///
/// Contended, a waiter spins briefly and then yields its time slice, which suits sections that
/// never block and never call out. Anything longer (a sweep, a dictionary insertion, a loop's
/// inbox) belongs behind ``LockedValue``.
///
/// - Important: Never call user code, and never block, while holding it.
@usableFromInline
package struct SpinLock: ~Copyable, Sendable {
    @usableFromInline
    let locked = Atomic<Bool>(false)

    @inlinable
    package init() {}

    /// Takes the lock, waiting if another thread holds it.
    @inlinable
    package func lock() {
        // Acquire: everything the previous holder wrote before its release is visible now.
        if locked.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        lockContended()
    }

    /// Releases the lock.
    @inlinable
    package func unlock() {
        locked.store(false, ordering: .releasing)
    }

    /// Runs `body` holding the lock.
    @inlinable
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    @usableFromInline
    func lockContended() {
        var spins = 0
        while true {
            // Wait for the lock to look free before trying again, so that waiters do not keep
            // the cache line bouncing between cores.
            while locked.load(ordering: .relaxed) {
                if spins < 64 {
                    spins += 1
                } else {
                    sched_yield()
                }
            }
            if locked.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        }
    }
}
