/// A one-shot timer on a context's destination executor, for `timeout`, `delay`, the
/// after-initializers and `retry`.
///
/// The destination is fixed when the timer is created, from ``PromiseContext/executor``:
/// `.immediate` is `.auto` as evaluated then, `.nowOr(x)` is `x`. The timer itself is the
/// executor's (``PromiseExecutor/schedule(after:_:)``): a loop timer on an event loop, a virtual
/// timer on a test loop, a Dispatch timer on Dispatch contexts. An executor that reserves a place
/// for timed work up front (``HeadOfLineTimerExecutor``, operation queues) gets that reservation
/// at creation, before the timer is armed.
///
/// The timer holds its work, not the executor: ``cancel()`` releases the work at once, whatever
/// the executor does with its own handle, so a cancelled timer never keeps a promise's result
/// alive until its deadline.
///
/// An executor that will never run the timer (an event loop or a test loop that shut down, before
/// or after the timer was armed) releases what it was given without running it. The timer notices
/// (see ``ExecutorHold``) and calls its work with ``Firing/discarded``, so that the promise
/// waiting on it (`timeout`, `delay`, `Promise(on:…after:)`, `retry`) ends cancelled instead of
/// pending forever.
///
/// - Important: `@unchecked Sendable`: `state` is only touched under `lock`, `executor` and
///   `reservation` are immutable after init, and the work is only run or released outside the
///   lock.
@usableFromInline
final class PromiseTimer: @unchecked Sendable {
    /// Why the timer's work is called.
    @usableFromInline
    enum Firing: Sendable {
        /// The delay passed, on the executor.
        case due
        /// The executor released the timer without running it (it shut down): the work runs on
        /// the releasing thread, and should cancel what waits on the timer.
        case discarded
    }

    /// What the timer runs: once, with the reason.
    @usableFromInline
    typealias Work = @Sendable (Firing) -> Void

    private enum State {
        /// Created, not armed yet.
        case idle
        /// Armed; the handle arrives just after `schedule` returns.
        case armed(Work, (any PromiseScheduledWork)?)
        /// Cancelled before firing, or fired: the work is gone.
        case done
    }

    private let lock = SpinLock()
    private var state = State.idle
    private let executor: any PromiseExecutor
    /// The place reserved on a head-of-line executor, if the executor offers one.
    private let reservation: (any PromiseTimerReservation)?

    /// Runs `body` on the state under the lock: the core's ``SpinLock``, whose atomics
    /// ThreadSanitizer sees (unlike `Mutex`'s futex path). The access to the state begins inside
    /// the lock.
    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.withLock { body(&state) }
    }

    /// A timer whose work will run on `context`'s destination executor.
    @usableFromInline
    init(on context: PromiseContext) {
        let executor = context.executor
        self.executor = executor
        reservation = (executor as? any HeadOfLineTimerExecutor)?.reserveTimerSlot()
    }

    /// Runs `work` on the destination once `delay` has passed, unless cancelled first.
    ///
    /// Does nothing if the timer was cancelled already (a cancel may race an arm). Arm once.
    @usableFromInline
    func arm(after delay: Duration, _ work: @escaping Work) {
        let isArmed: Bool = withState { state in
            guard case .idle = state else { return false }
            state = .armed(work, nil)
            return true
        }
        guard isArmed else { return }
        // The executor is called outside the lock: it takes its own locks, and a test loop or an
        // event loop may run the work on another thread before `schedule` even returns.
        // The executor's closure is the only owner of `hold`: when the executor releases it
        // without having run it, the hold's deinit tells the timer.
        let hold = ExecutorHold(self)
        let handle: any PromiseScheduledWork
        if let reservation {
            handle = reservation.arm(after: delay) { hold.fire() }
        } else {
            handle = executor.schedule(after: delay) { hold.fire() }
        }
        let keep: Bool = withState { state in
            guard case .armed(let work, nil) = state else { return false }
            state = .armed(work, handle)
            return true
        }
        // Cancelled (or fired) while `schedule` ran: the handle is not needed any more.
        if !keep { handle.cancel() }
    }

    /// Runs `work` on the destination with a synchronous trigger, without a timer (a zero
    /// timeout): inline on `.immediate` and `.nowOr(_:)` before returning, otherwise soon on the
    /// context, unless cancelled first.
    @usableFromInline
    func runNow(on context: PromiseContext, _ work: @escaping Work) {
        let isArmed: Bool = withState { state in
            guard case .idle = state else { return false }
            state = .armed(work, nil)
            return true
        }
        guard isArmed else { return }
        reservation?.cancel()
        let hold = ExecutorHold(self)
        context.execute(isSynchronous: true) { hold.fire(resettingExecutingNow: false) }
    }

    /// Keeps the work from running if it has not started, and releases it. Idempotent.
    @usableFromInline
    func cancel() {
        let taken: (work: Work?, handle: (any PromiseScheduledWork)?) = withState { state in
            switch state {
            case .idle:
                state = .done
                return (nil, nil)
            case .armed(let work, let handle):
                state = .done
                return (work, handle)
            case .done:
                return (nil, nil)
            }
        }
        if let handle = taken.handle {
            handle.cancel()
        } else {
            // Never armed, or armed without a handle yet (`arm` cancels that one itself): free
            // the reserved place, if any.
            reservation?.cancel()
        }
        // `taken.work` is released here, outside the lock.
    }

    /// Runs the work, unless it was cancelled.
    ///
    /// - Parameter resettingExecutingNow: True for executor timers, whose work never runs "now";
    ///   false when the context already set the flag (``runNow(on:_:)``).
    private func fire(resettingExecutingNow: Bool = true) {
        guard let work = takeArmedWork() else { return }
        if resettingExecutingNow {
            ExecutionFlags.with(isExecutingNow: false) { work(.due) }
        } else {
            work(.due)
        }
    }

    /// The executor released the timer without running it: runs the work with
    /// ``Firing/discarded``, on the releasing thread, unless it fired or was cancelled first.
    fileprivate func executorDiscarded() {
        guard let work = takeArmedWork() else { return }
        ExecutionFlags.with(isExecutingNow: false) { work(.discarded) }
    }

    /// Ends an armed timer and hands back its work; nil if it already fired or was cancelled.
    private func takeArmedWork() -> Work? {
        // The handle is taken out too, so that the executor's handle is released outside the
        // lock (an executor is any type; its deinit is not ours to run under our lock).
        let taken: (work: Work?, handle: (any PromiseScheduledWork)?) = withState { state in
            guard case .armed(let work, let handle) = state else { return (nil, nil) }
            state = .done
            return (work, handle)
        }
        withExtendedLifetime(taken.handle) {}
        return taken.work
    }

    /// What a timer hands its executor: the executor's closure is its only owner, so its deinit
    /// means the executor released the closure. Released after running, or after a cancel, the
    /// timer is already done and nothing happens; released unrun (a shut-down loop), the timer
    /// learns that it will never fire.
    private final class ExecutorHold: Sendable {
        let timer: PromiseTimer

        init(_ timer: PromiseTimer) {
            self.timer = timer
        }

        func fire(resettingExecutingNow: Bool = true) {
            timer.fire(resettingExecutingNow: resettingExecutingNow)
        }

        deinit {
            timer.executorDiscarded()
        }
    }
}

/// An executor that reserves a place for timed work before the timer is armed, so that the work
/// keeps its place in line (Tomorrowland's operation-queue rule: the operation is added at once
/// and only becomes ready when the timer fires).
protocol HeadOfLineTimerExecutor: PromiseExecutor {
    /// Reserves a place for work that a timer will release later.
    func reserveTimerSlot() -> any PromiseTimerReservation
}

/// A place reserved by a ``HeadOfLineTimerExecutor``.
protocol PromiseTimerReservation: Sendable {
    /// Starts the timer; `work` runs in the reserved place once `delay` has passed. Call once.
    ///
    /// - Returns: A handle that cancels the timer and frees the reserved place.
    func arm(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork

    /// Frees the reserved place without running anything. Idempotent.
    func cancel()
}
