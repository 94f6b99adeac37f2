#if canImport(Glibc)
    import Glibc
#endif

/// A `pthread_mutex_t`: the lock of a ``ShardedStore`` shard and of the ``ExpirySweeper``.
///
/// Why not `Synchronization.Mutex`: on Swift 6.3.1 (Linux) it locks with futex calls that
/// ThreadSanitizer does not intercept, so a TSan run of the daemon with several loops would report
/// races on the shards it does protect. A pthread mutex is intercepted, costs one uncontended
/// compare-exchange each way, and a waiter that cannot get it sleeps in the kernel instead of
/// spinning while the holder is descheduled (the loops share the cores with everything else).
///
/// - Important: `@unchecked Sendable`: the mutex is only used through `pthread_mutex_lock` and
///   `pthread_mutex_unlock`, which are safe from any thread.
final class PthreadMutex: @unchecked Sendable {
    /// Heap-allocated: a pthread mutex must not move once initialized.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex; `body` must not take it again.
    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
