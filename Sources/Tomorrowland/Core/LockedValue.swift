#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// State guarded by a `pthread_mutex_t`: the library's one lock-protected state type.
///
/// Everything that keeps state behind a lock uses it: an `EventLoop`'s inbox (contended by every
/// thread that submits work), a `TestLoop`'s state, the late-work policy, name resolution, the
/// tests' recorders. The promise core's own few-instruction sections use the bare ``SpinLock``
/// instead, the one other lock, for speed (see there).
///
/// Why a pthread mutex:
/// - not `Synchronization.Mutex`: on Swift 6.3.1 (Linux) it locks with futex calls that
///   ThreadSanitizer does not intercept, so `swift test --sanitize=thread` reports races on state
///   it does protect (checked with a four-thread probe: correct counts, TSan warnings every run);
/// - not a spin lock: a contended waiter (four producer threads on two cores in the loop's
///   cross-thread stress test) would burn its time slice while the holder is descheduled; a
///   pthread mutex spins briefly, then sleeps in the kernel.
///
/// `State` may be non-copyable (a `TestLoop` keeps its `SchedulingCore` state in one).
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
