#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// State guarded by a `pthread_mutex_t`: the library's lock for state.
///
/// The lock policy: everything that keeps state behind a lock uses this type (an `EventLoop`'s
/// inbox, a `TestLoop`'s state, the late-work policy, name resolution, the NIO executors' table,
/// the deinit watcher, the service runner, the tests' recorders). The one other lock is
/// ``SpinLock``, and only for the promise core's per-object sections, where the cost of this one
/// shows (see there). `Benchmarks/scripts/lock-costs.sh` measures the three locks; the figures
/// are in `Benchmarks/README.md`, "Lock costs". An object holding this lock makes 3 allocations
/// (the object, this class's instance and its mutex), one holding a ``SpinLock`` or a
/// `Synchronization.Mutex` 1.
///
/// Why not `Synchronization.Mutex`, cheaper as it is: on Swift 6.3.1 (Linux) it locks with
/// futex calls inside the uninstrumented Synchronization library, so ThreadSanitizer does not
/// see its ordering and reports races on state it does protect (`lock-costs.sh --tsan`: four
/// threads, the counts right, reports every run), and `swift test --sanitize=thread` is a gate
/// here. TSan intercepts the pthread calls. Where this type sits, its dearer lock and unlock are
/// small beside the work done under it (a cross-thread submission also writes an `eventfd`; a
/// `TestLoop` call runs the scheduling engine).
///
/// Why not a spin lock: a contended waiter (four producer threads on two cores in the loop's
/// cross-thread stress test) would burn its time slice while the holder is descheduled; a
/// pthread mutex spins briefly, then sleeps in the kernel.
///
/// Why the mutex is allocated apart from the object: a pthread mutex must not move once
/// initialized, and Swift promises no fixed address for a stored property handed to C. That
/// allocation is paid once per lock, by objects that live long (loops, resolvers, tables).
///
/// `State` may be non-copyable.
///
/// - Important: `@unchecked Sendable`: `state` is only touched inside ``withLock(_:)``, between
///   `pthread_mutex_lock` and `pthread_mutex_unlock`. `body` must not take the same lock again
///   (it is not recursive) and must not call user code.
@usableFromInline
package final class LockedValue<State: ~Copyable>: @unchecked Sendable {
    /// Heap-allocated: a pthread mutex must not move once initialized.
    @usableFromInline
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline
    var state: State

    /// A lock protecting `state`.
    package init(_ state: consuming State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    ///
    /// Inlinable so that the loops' hot paths (a cross-thread submission, taking the inbox) pay
    /// for the lock and unlock calls only, with no closure context.
    @inlinable
    @inline(__always)
    package func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
