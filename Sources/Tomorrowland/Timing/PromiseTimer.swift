/// A one-shot timer on a context's destination executor, for `delay`, the after-initializers and
/// `retry` (a `timeout` keeps its timer in its own promise, see ``TimeoutBox``).
///
/// The destination is fixed when the timer is created, from ``PromiseContext/executor``:
/// `.immediate` is `.auto` as evaluated then, `.nowOr(x)` is `x`. The timer itself is the
/// executor's: a loop timer on an event loop and a virtual timer on a test loop (both keep this
/// object in their timers, ``PromiseExecutor/storeTimer(_:after:)``), a Dispatch timer on
/// Dispatch contexts (``PromiseExecutor/scheduleSelfGuarded(after:_:)``). An executor that reserves a place
/// for timed work up front (``PromiseExecutor/reserveTimerSlot()``: operation queues) gets that
/// reservation at creation, before the timer is armed.
///
/// The timer holds its work, not the executor: ``cancel()`` releases the work at once, whatever
/// the executor does with its own handle, so a cancelled timer never keeps a promise's result
/// alive until its deadline.
///
/// An executor that will never run the timer (an event loop or a test loop that shut down, before
/// or after the timer was armed) releases what it was given without running it. The timer notices
/// (``PromiseTimerJob/timerReleased()``, or ``PromiseTimerHold``) and calls its work with ``Firing/discarded``, so that the promise
/// waiting on it (`delay`, `Promise(on:…after:)`, `retry`) ends cancelled instead of pending
/// forever.
///
/// - Important: `@unchecked Sendable`: `state` and `work` are only touched under `lock`,
///   `executor` is immutable after init, and the work is only run or released outside the lock.
@usableFromInline
final class PromiseTimer: PromiseTimerTarget, @unchecked Sendable {
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

    private let lock = SpinLock()
    private var state: PromiseTimerState
    /// The work, from arming until it runs or the timer is cancelled.
    private var work: Work?
    private let executor: any PromiseExecutor

    /// Runs `body` on the state under the lock: the core's ``SpinLock``, whose atomics
    /// ThreadSanitizer sees (unlike `Mutex`'s futex path).
    private func withState(_ body: (inout PromiseTimerState) -> Void) {
        lock.withLock { body(&state) }
    }

    /// A timer whose work will run on `context`'s destination executor.
    @usableFromInline
    init(on context: PromiseContext) {
        let executor = context.executor
        self.executor = executor
        state = PromiseTimerState(reservation: executor.reserveTimerSlot())
    }

    /// Runs `work` on the destination once `delay` has passed, unless cancelled first.
    ///
    /// Does nothing if the timer was cancelled already (a cancel may race an arm). Arm once.
    @usableFromInline
    func arm(after delay: Duration, _ work: @escaping Work) {
        guard store(work) else { return }
        armTimer(after: delay, on: executor) { withState($0) }
    }

    /// Runs `work` on the destination with a synchronous trigger, without a timer (a zero
    /// delay): inline on `.immediate` and `.nowOr(_:)` before returning, otherwise soon on the
    /// context, unless cancelled first.
    @usableFromInline
    func runNow(on context: PromiseContext, _ work: @escaping Work) {
        guard store(work) else { return }
        runTimerNow(on: context) { withState($0) }
    }

    /// Keeps the work unless the timer was cancelled; false then.
    private func store(_ work: @escaping Work) -> Bool {
        lock.withLock {
            guard state.phase == .idle else { return false }
            self.work = work
            return true
        }
    }

    /// Keeps the work from running if it has not started, and releases it. Idempotent.
    @usableFromInline
    func cancel() {
        let (cancellation, work): (PromiseTimerCancellation, Work?) = lock.withLock {
            (state.cancel(), self.work.take())
        }
        cancellation.perform(on: executor)
        // `work` is released here, outside the lock.
        withExtendedLifetime(work) {}
    }

    @usableFromInline
    func timerFired(resettingExecutingNow: Bool) {
        guard let work = takeArmedWork() else { return }
        if resettingExecutingNow {
            ExecutionFlags.with(isExecutingNow: false) { work(.due) }
        } else {
            work(.due)
        }
    }

    @usableFromInline
    func timerReleased() {
        guard let work = takeArmedWork() else { return }
        ExecutionFlags.with(isExecutingNow: false) { work(.discarded) }
    }

    /// Ends an armed timer and hands back its work; nil if it already fired or was cancelled.
    private func takeArmedWork() -> Work? {
        // The spent handle is taken out too, so that it is released outside the lock (an
        // executor is any type; its deinit is not ours to run under our lock).
        let (ended, work): ((wasArmed: Bool, handle: (any PromiseScheduledWork)?), Work?) = lock.withLock {
            let ended = state.end()
            return (ended, ended.wasArmed ? self.work.take() : nil)
        }
        withExtendedLifetime(ended.handle) {}
        return work
    }
}
