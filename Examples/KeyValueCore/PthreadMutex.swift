#if canImport(Glibc)
    import Glibc
#endif

/// A `pthread_mutex_t`: the examples' one lock for state, that of a ``ShardedStore`` shard and
/// of the ``ExpirySweeper`` (the demo's counter is an atomic; the example tests use the test
/// toolkit's `Locked`; the Hummingbird example, a package of its own on swift-nio, uses NIO's
/// `NIOLockedValueBox`, the same pthread mutex).
///
/// Why not `Synchronization.Mutex`: on Swift 6.3.1 (Linux) it locks with futex calls that
/// ThreadSanitizer does not intercept, so a TSan run of the daemon with several loops would report
/// races on the shards it does protect (`make test-tsan` runs the examples' suites, and
/// KeyValueDaemonTests start loopkv with two loops). A pthread mutex is intercepted, costs one
/// uncontended compare-exchange each way, and a waiter that cannot get it sleeps in the kernel
/// instead of spinning while the holder is descheduled (the loops share the cores with everything
/// else).
///
/// Why a type of its own: the library's lock, `LockedValue`, is the same pthread mutex, but it is
/// `package` and the examples see the public API only. It is not a hot-path exception to the lock
/// policy: it is the ordinary lock, chosen for the sanitizer, not for speed (no benchmark here
/// measures it; Benchmarks/README.md "Lock costs" puts the library's pthread lock and unlock at 72
/// instructions against 27 for a `Mutex`, small beside parsing and answering a request).
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
