/// The promise a `timeout` returns, which is also its timer: one node per timeout.
///
/// A derived promise registered on its upstream as a propagating observer (its cancel request
/// reaches the upstream once, through the core's inline link), whose box also keeps the timer's
/// state (``TimeoutTimerState``, under the promise's own lock). What the timeout makes of the
/// upstream's result, and its rejection when it fires, come from `Mapping` (static: nothing
/// stored). An executor that stores promise timers itself (``PromiseExecutor/storeTimer(_:after:)``:
/// the event loop, on its own thread, and the test loop) keeps this box as the timer, so a timeout
/// allocates nothing beside its promise; it calls ``timerReleased()`` for a timer it will never
/// run (it shut down). Other executors get a ``PromiseTimerHold`` on this box, whose deinit tells
/// a discarded timer apart, and the handle they return goes in a ``TimeoutTimerHolder``.
///
/// Two fields beside the derived box's, so that a box for a small value fits 120 bytes (a
/// 128-byte chunk, served from glibc's fast bins): the context (whose executor is borrowed
/// again to cancel a stored timer) and the 14-byte timer state.
///
/// The four ways it ends, each exactly once, whichever comes first:
/// - the upstream resolves: its callback (the `.arrive` stage of the handler) cancels the timer at
///   once, on the resolving thread, and the result is delivered on `context`;
/// - the timer fires: the promise is rejected with `Mapping.timedOut` (or gets the upstream's
///   result if that arrived meanwhile, its callback still on the way), and passes one cancel
///   request upstream, unless it passed one already;
/// - the executor discards the timer: the promise is cancelled, and passes a cancel request
///   upstream likewise;
/// - the upstream dies unresolved: its deinit fires this promise with `.cancelled`.
///
/// - Important: `@unchecked Sendable`: `timer` is only touched under the core's `lock`; `context`
///   is immutable.
@usableFromInline
final class TimeoutBox<Value, Error, E, Mapping: TimeoutMapping>: DerivedBox<PromiseResult<Value, E>>,
    PromiseTimerTarget, @unchecked Sendable
where Mapping.Value == Value, Mapping.Upstream == Error, Mapping.Failure == E {
    /// Where the upstream's result is delivered. Its executor (``PromiseContext/executor``, as
    /// evaluated when the timeout was made) is where the timer is armed; a timer is stored in
    /// that executor's own timers only when this context names it (``PromiseContext/namesExecutor``),
    /// so that the cancel reaches the same executor by borrowing it from here, without a field
    /// of its own (the box stays within 120 bytes: glibc's fast bins).
    @usableFromInline
    let context: PromiseContext
    /// The timer; guarded by the core's `lock`.
    @usableFromInline
    @exclusivity(unchecked)
    var timer: TimeoutTimerState

    /// A pending timeout promise, its timer idle.
    @inlinable
    init(context: PromiseContext, handler: @escaping Handler) {
        self.context = context
        timer = TimeoutTimerState()
        super.init(handler: handler)
    }

    /// Arms the timer on the context's executor, or runs the timeout soon on the context for a
    /// zero or negative delay. Call once, after the box is registered on its upstream.
    @usableFromInline
    func start(after delay: Duration) {
        // `attoseconds` is emitted into this module: `<=` on `Duration` is two calls into the
        // standard library (the `.zero` getter and `<`).
        if delay.attoseconds <= 0 {
            runNow()
        } else {
            context.withExecutor { arm(after: delay, on: $0) }
        }
    }

    /// Arms the timer, unless it was cancelled already (the upstream resolved while this box
    /// registered on it): through the place the executor reserves for it if it does (an
    /// operation queue: reserved now, so that the work goes before operations added after the
    /// `timeout` call), else in the executor's own timers if the context names the executor and
    /// it stores timers (no allocation), else with `executor.scheduleSelfGuarded(after:_:)`.
    private func arm(after delay: Duration, on executor: any PromiseExecutor) {
        lock.lock()
        let isArming = timer.beginArming()
        lock.unlock()
        guard isArming else { return }
        // The executor is called outside the lock: it takes its own locks, and it may run the
        // work on another thread before `schedule` even returns.
        let reservation = executor.reserveTimerSlot()
        if reservation == nil, context.namesExecutor, let id = executor.storeTimer(self, after: delay) {
            lock.lock()
            let keep = timer.finishArming(storedAs: id)
            lock.unlock()
            // Cancelled while the executor stored it: remove it. Fired meanwhile (another thread
            // drives the executor): the identifier is stale, and cancelling it does nothing.
            if !keep { executor.cancelStoredTimer(id) }
            return
        }
        let hold = PromiseTimerHold(self)
        let handle: any PromiseScheduledWork
        if let reservation {
            handle = reservation.arm(after: delay) { hold.fire() }
        } else {
            // The hold's target checks its own state before running anything (a cancelled or
            // settled timer does nothing), so the executor needs no guard around the work.
            handle = executor.scheduleSelfGuarded(after: delay) { hold.fire() }
        }
        let holder = TimeoutTimerHolder()
        lock.lock()
        let keep = timer.finishArming(with: handle, in: holder)
        lock.unlock()
        // Cancelled while `schedule` ran: cancel the timer. Fired meanwhile: cancelling a timer
        // that started does nothing.
        if !keep { handle.cancel() }
    }

    /// Runs the timeout soon on the context with a synchronous trigger, without a timer (a zero
    /// delay): inline on `.immediate` and `.nowOr(_:)` before returning, otherwise soon on the
    /// context, unless cancelled first.
    private func runNow() {
        lock.lock()
        let isArming = timer.beginArming()
        lock.unlock()
        guard isArming else { return }
        let hold = PromiseTimerHold(self)
        context.execute(isSynchronous: true) { hold.fire(resettingExecutingNow: false) }
    }

    /// The upstream resolved: stops the timer (at once, releasing the executor's work) and says
    /// whether this promise is settled already (by the timer, or a discard).
    @usableFromInline
    func upstreamArrived() -> Bool {
        lock.lock()
        let isResolved = status == .resolved
        if let stored = timer.cancelStored() {
            lock.unlock()
            cancelStoredTimer(stored)
            return isResolved
        }
        let cancellation = timer.cancel()
        lock.unlock()
        cancellation.perform { cancelStoredTimer($0) }
        return isResolved
    }

    /// Cancels the timer stored as `id` in the context's executor (a timer is only stored
    /// through a context that names its executor).
    @inline(__always)
    private func cancelStoredTimer(_ id: PromiseTimerID) {
        context.withExecutor { $0.cancelStoredTimer(id) }
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
        lock.lock()
        let ended = timer.end()
        lock.unlock()
        // The spent holder (and its handle) is released here, outside the lock.
        return ended.wasArmed
    }

    /// Settles this promise from its timer: rejected with `Mapping.timedOut` (or with the upstream's
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
        let taken = markResolvedWithoutSlotLocked(cancelled: false)
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
            result = Mapping.map(upstreamResult)
        } else {
            result = .error(Mapping.timedOut)
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

extension PromiseContext {
    /// Calls `body` with ``executor``: for `.executor(e)`, `e` borrowed from this context (not
    /// retained and released around the call). Keep the `switch` on a `borrowing` value: an
    /// `if case` binding, or a switch on a class's field, copies the context first.
    @inlinable
    @inline(__always)
    func withExecutor<R>(_ body: (any PromiseExecutor) -> R) -> R {
        Self.withExecutor(of: self, body)
    }

    /// ``withExecutor(_:)`` on a borrowed context.
    @inlinable
    @inline(__always)
    static func withExecutor<R>(of context: borrowing PromiseContext, _ body: (any PromiseExecutor) -> R) -> R {
        switch context {
        case .executor(let executor):
            return body(executor)
        default:
            return body(context.executor)
        }
    }

    /// Whether this context names its executor (`.executor(e)`, or `.nowOr(_:)` of one): then
    /// ``executor`` gives back that same instance every time, so a timer stored in it can be
    /// cancelled through the context later.
    @inline(__always)
    var namesExecutor: Bool {
        // `.executor(e)` checked inline, without binding (or copying) the payload.
        if case .executor = self { return true }
        return nowOrNamesExecutor
    }

    /// Whether this context is a `.nowOr(_:)` of a context that names its executor.
    private var nowOrNamesExecutor: Bool {
        guard case .nowOr(let inner) = self else { return false }
        return inner.namesExecutor
    }
}
