#if canImport(Glibc)
import Glibc
#endif

/// State guarded by a `pthread_mutex_t`: the loop's inbox lock.
///
/// Why not `Synchronization.Mutex`: on Swift 6.3.1 (Linux) it locks with futex calls that
/// ThreadSanitizer does not intercept, so `swift test --sanitize=thread` reports races on state
/// it does protect. Why not the core's `SpinLock`: the inbox is contended by every producer
/// thread at once (the cross-thread stress test runs four on two cores), and a spinning waiter
/// can burn its time slice while the holder is descheduled; a pthread mutex spins briefly, then
/// sleeps in the kernel.
///
/// - Important: `@unchecked Sendable`: `state` is only touched inside ``withLock(_:)``, between
///   `pthread_mutex_lock` and `pthread_mutex_unlock`.
final class PthreadLocked<State>: @unchecked Sendable {
    /// Heap-allocated: a pthread mutex must not move once initialized.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state; `body` must not run user code or take
    /// this lock again.
    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
