/// The promise a `timeout` returns, which is also its timer: one node per timeout.
///
/// A derived promise registered on its upstream as a propagating observer (its cancel request
/// reaches the upstream once, through the core's inline link), whose box also keeps the timer's
/// state (``PromiseTimerState``, under the promise's own lock) and what the timeout needs when it
/// fires. An executor that stores promise timers itself (``PromiseExecutor/storeTimer(_:after:)``:
/// the event loop, on its own thread, and the test loop) keeps this box as the timer, so a timeout
/// allocates nothing beside its promise; it calls ``timerReleased()`` for a timer it will never
/// run (it shut down). Other executors get a ``PromiseTimerHold`` on this box, whose deinit tells
/// a discarded timer apart.
///
/// The four ways it ends, each exactly once, whichever comes first:
/// - the upstream resolves: its callback (the `.arrive` stage of the handler) cancels the timer at
///   once, on the resolving thread, and the result is delivered on `context`;
/// - the timer fires: the promise is rejected with `timedOut` (or gets the upstream's result if
///   that arrived meanwhile, its callback still on the way), and passes one cancel request
///   upstream, unless it passed one already;
/// - the executor discards the timer: the promise is cancelled, and passes a cancel request
///   upstream likewise;
/// - the upstream dies unresolved: its deinit fires this promise with `.cancelled`.
///
/// - Important: `@unchecked Sendable`: `timer` is only touched under the core's `lock`; the other
///   fields are immutable. `timedOut` is an error value only read (it travels with the promise it
///   rejects, like any error).
@usableFromInline
final class TimeoutBox<Value, Error, E>: DerivedBox<PromiseResult<Value, E>>, PromiseTimerTarget,
    @unchecked Sendable
{
    /// Where the upstream's result is delivered.
    @usableFromInline
    let context: PromiseContext
    /// The context's executor, as evaluated when the timeout was made: where the timer is armed,
    /// and cancelled. Kept rather than asked of `context` again: the reference the timeout took
    /// anyway moves here, and the cancel inside the upstream's `fulfill` needs no second lookup
    /// (nor the retain and release that would come with it).
    @usableFromInline
    let executor: any PromiseExecutor
    /// The timer; guarded by the core's `lock`.
    @usableFromInline
    @exclusivity(unchecked)
    var timer: PromiseTimerState
    @usableFromInline
    let timedOut: E
    @usableFromInline
    let transform: @Sendable (PromiseResult<Value, Error>) -> PromiseResult<Value, E>

    /// A pending timeout promise whose timer has the place `reservation` (if any).
    @inlinable
    init(
        context: PromiseContext, executor: any PromiseExecutor,
        reservation: (any PromiseTimerReservation)?, timedOut: E,
        transform: @escaping @Sendable (PromiseResult<Value, Error>) -> PromiseResult<Value, E>,
        handler: @escaping Handler
    ) {
        self.context = context
        self.executor = executor
        timer = PromiseTimerState(reservation: reservation)
        self.timedOut = timedOut
        self.transform = transform
        super.init(handler: handler)
    }

    /// Runs `body` on the timer's state under the promise's lock.
    @usableFromInline
    func withTimer(_ body: (inout PromiseTimerState) -> Void) {
        lock.withLock { body(&timer) }
    }

    /// Arms the timer on `executor` (``executor``, passed by the caller that holds it: a load of
    /// the field here would be retained and released around the calls), or runs the timeout soon
    /// on the context for a zero or negative delay.
    @usableFromInline
    func start(after delay: Duration, on executor: any PromiseExecutor) {
        if delay <= .zero {
            runTimerNow(on: context) { withTimer($0) }
        } else {
            // A closure literal, not the method reference `withTimer`: that one is a partial
            // application, whose context retains and releases `self`.
            armTimer(after: delay, on: executor) { withTimer($0) }
        }
    }

    /// The upstream resolved: stops the timer (at once, releasing the executor's work) and says
    /// whether this promise is settled already (by the timer, or a discard).
    @usableFromInline
    func upstreamArrived() -> Bool {
        lock.lock()
        let isResolved = status == .resolved
        if let stored = timer.cancelStored() {
            lock.unlock()
            executor.cancelStoredTimer(stored)
            return isResolved
        }
        let cancellation = timer.cancel()
        lock.unlock()
        cancellation.perform(on: executor)
        return isResolved
    }

    @usableFromInline
    func timerFired(resettingExecutingNow: Bool) {
        guard endTimer() else { return }
        if resettingExecutingNow {
            ExecutionFlags.with(isExecutingNow: false) { settleByTimer(discarded: false) }
        } else {
            settleByTimer(discarded: false)
        }
    }

    @usableFromInline
    func timerReleased() {
        guard endTimer() else { return }
        ExecutionFlags.with(isExecutingNow: false) { settleByTimer(discarded: true) }
    }

    /// Ends an armed timer; false if it already fired or was cancelled.
    private func endTimer() -> Bool {
        let ended: (wasArmed: Bool, handle: (any PromiseScheduledWork)?) = lock.withLock { timer.end() }
        // The spent handle is released here, outside the lock.
        return ended.wasArmed
    }

    /// Settles this promise from its timer: rejected with `timedOut` (or with the upstream's
    /// result, if the upstream resolved before the timer fired and its callback is still on the
    /// way), or cancelled when the executor discarded the timer; then passes one cancel request
    /// upstream, unless a cancel request on this promise passed it already.
    private func settleByTimer(discarded: Bool) {
        lock.lock()
        guard status != .resolved else {
            lock.unlock()
            return
        }
        // Resolved under the lock in one step with the result, so that nobody sees the status
        // without it. The inline link to the upstream comes out with the lists: present unless a
        // cancel request on this promise took it (and passed its request on).
        let taken = markResolvedLocked(cancelled: false)
        // Followed under the lock, while the link still guarantees the upstream's memory.
        let upstream = taken.upstream?.retainLocked()
        let result: PromiseResult<Value, E>
        if discarded {
            result = .cancelled
        } else if let upstream,
            // CoreInvariants: "The link rule": the link, followed under this lock, leads to the upstream this
            // box was registered on, a `PromiseBox<Value, Error>`.
            let upstreamResult = unsafeDowncast(upstream, to: PromiseBox<Value, Error>.self).result
        {
            // The one nested lock: this promise's, then its upstream's; nothing takes them the
            // other way round (an upstream never locks its callbacks' promises).
            result = transform(upstreamResult)
        } else {
            result = .error(timedOut)
        }
        storedResult = result
        isCancelledResult = result.isCancelled
        lock.unlock()
        // Outside the lock: this promise's callbacks first, then the cancel request upstream (the
        // order the reference model checks: the timeout's result is seen before the upstream's
        // cancel handlers run).
        if let head = taken.head {
            CallbackDrain.run(ReadyCallbacks(source: self, head: PromiseCallbackNode.reversed(head)))
        }
        upstream?.removeObserver()
    }
}
