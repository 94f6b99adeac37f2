#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// State guarded by a `pthread_mutex_t`.
///
/// Why not `Synchronization.Mutex`: on Swift 6.3.1 (Linux) it locks with futex system calls
/// that ThreadSanitizer does not see, so `swift test --sanitize=thread` reports races on state
/// that the mutex does protect (checked with a four-thread probe: correct counts, TSan warnings
/// every run). TSan intercepts `pthread_mutex_lock`, so this lock keeps TSan runs meaningful.
///
/// `@unchecked Sendable` because the invariant is the lock's: `state` is only touched inside
/// ``withLock(_:)``, between `pthread_mutex_lock` and `pthread_mutex_unlock`.
final class LockedState<State: ~Copyable>: @unchecked Sendable {
    /// Heap-allocated: a pthread mutex must not move once initialized.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ state: consuming State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state. `body` must not call back into code that
    /// takes this lock (it is not recursive), and should not run user code.
    @inline(__always)
    func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
