import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A lock for critical sections of a few dozen instructions, built on `Atomic`: the promise
/// core's lock (a promise's state, tokens, timers, retries).
///
/// The library's other lock is ``LockedValue`` (a pthread mutex around a value), for everything
/// else. This one stays separate because it sits on the promise hot path: uncontended it costs a
/// compare-exchange and a store, where a pthread mutex costs two library calls, and it is a
/// stored `~Copyable` struct, with no allocation of its own (one heap object per promise, not
/// two).
///
/// Why not `Synchronization.Mutex`: on Linux with Swift 6.3.1 its futex-based implementation is
/// invisible to ThreadSanitizer, which then reports races on everything it protects; the atomic
/// operations here are instrumented, so TSan sees the happens-before edges. Uncontended, a lock
/// and an unlock are one compare-exchange and one store. Contended, a waiter spins briefly and
/// then yields its time slice, which suits sections that never block and never call out.
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
