/// The one-shot life of a promise timer, kept by its owner under the owner's lock: a
/// ``PromiseTimer`` (`delay`, the after-initializers, `retry`), which is why it is a value and not
/// an object of its own. A timeout's own promise (``TimeoutBox``) keeps the same phases in the
/// smaller ``TimeoutTimerState``.
///
/// Transitions hand back what to cancel; the owner does it after unlocking (an executor's handle
/// or reservation is any type, and cancelling it takes the executor's locks). The handle and the
/// reservation only ever move (`take()`), never get copied: copying an optional existential goes
/// through its value witnesses, a cost every timeout would pay.
@usableFromInline
struct PromiseTimerState {
    @usableFromInline
    enum Phase: UInt8 {
        /// Created, not armed yet.
        case idle
        /// Being armed: the executor has the work, the handle is on its way back.
        case arming
        /// Armed: the executor keeps the timer, and `handle` or `storedTimer` names it.
        case armed
        /// Cancelled, fired, or discarded by the executor.
        case done
    }

    @usableFromInline
    var phase = Phase.idle
    /// The executor's handle, while armed.
    @usableFromInline
    var handle: (any PromiseScheduledWork)?
    /// The place the executor reserved, until the timer is armed through it or cancelled.
    @usableFromInline
    var reservation: (any PromiseTimerReservation)?
    /// The timer in the executor's own timers (``PromiseExecutor/storeTimer(_:after:)``), while
    /// armed that way.
    @usableFromInline
    var storedTimer: PromiseTimerID?

    /// An idle timer with the place `reservation` (if the executor reserved one).
    @inlinable
    init(reservation: (any PromiseTimerReservation)?) {
        self.reservation = reservation
    }

    /// Moves an idle timer to arming; returns whether it did, and the reservation to arm through.
    @inline(__always)
    mutating func beginArming() -> (isArming: Bool, reservation: (any PromiseTimerReservation)?) {
        // Armed once already, or cancelled: unchanged.
        guard phase == .idle else { return (false, nil) }
        phase = .arming
        return (true, reservation.take())
    }

    /// Stores the handle that arming returned; false if the timer was cancelled or fired
    /// meanwhile, and the caller must cancel (or merely drop) `handle`.
    @inline(__always)
    mutating func finishArming(with handle: consuming any PromiseScheduledWork) -> Bool {
        guard phase == .arming else { return false }
        self.handle = consume handle
        phase = .armed
        return true
    }

    /// Records the timer that the executor stored itself; false if the timer was cancelled or
    /// fired meanwhile, and the caller must cancel `id` (or merely forget it).
    @inline(__always)
    mutating func finishArming(storedAs id: PromiseTimerID) -> Bool {
        guard phase == .arming else { return false }
        storedTimer = id
        phase = .armed
        return true
    }

    /// Ends the timer by a cancel; returns what to cancel outside the lock: the armed timer's
    /// handle or stored timer, or the place reserved for a timer that was never armed. (Being
    /// armed, the timer has none: ``finishArming(with:)`` and ``finishArming(storedAs:)`` leave
    /// the cancel to their caller.)
    @inline(__always)
    mutating func cancel() -> PromiseTimerCancellation {
        guard phase != .done else {
            return PromiseTimerCancellation(handle: nil, reservation: nil, storedTimer: nil)
        }
        phase = .done
        return PromiseTimerCancellation(
            handle: handle.take(), reservation: reservation.take(), storedTimer: storedTimer.take())
    }

    /// Ends the timer by a cancel if it is armed in its executor's own timers, the common case
    /// (a deadline cancelled because its request finished): returns the stored timer's
    /// identifier, to cancel outside the lock; nil, and nothing changed, otherwise (then use
    /// ``cancel()``). Spares the common case moving the optional existentials of ``cancel()``.
    @inline(__always)
    mutating func cancelStored() -> PromiseTimerID? {
        guard phase == .armed, let id = storedTimer else { return nil }
        phase = .done
        storedTimer = nil
        return id
    }

    /// Ends an armed (or arming) timer because it fired or its executor released it; returns
    /// whether it was armed, and the spent handle, to be dropped outside the lock.
    @inline(__always)
    mutating func end() -> (wasArmed: Bool, handle: (any PromiseScheduledWork)?) {
        guard phase == .arming || phase == .armed else { return (false, nil) }
        phase = .done
        // A stored timer needs nothing: the executor drops its reference after the call.
        storedTimer = nil
        return (true, handle.take())
    }
}

/// What a cancel of a ``PromiseTimerState`` leaves to do once the lock is released.
@usableFromInline
struct PromiseTimerCancellation {
    var handle: (any PromiseScheduledWork)?
    var reservation: (any PromiseTimerReservation)?
    var storedTimer: PromiseTimerID?

    /// Cancels the handle or the stored timer (on `executor`, the one that stored it), or frees
    /// the reservation. Call outside the owner's lock.
    @inline(__always)
    func perform(on executor: @autoclosure () -> any PromiseExecutor) {
        if let storedTimer {
            executor().cancelStoredTimer(storedTimer)
            return
        }
        // Optional chaining borrows the existential instead of copying it out.
        handle?.cancel()
        reservation?.cancel()
    }
}

/// The owner of a ``PromiseTimerState``: what a ``PromiseTimerHold`` calls, and what an executor
/// that stores timers itself keeps (as a ``PromiseTimerJob``).
@usableFromInline
protocol PromiseTimerTarget: PromiseTimerJob {
    /// The delay passed: runs the timer's work, on the executor (or, for a zero delay, as the
    /// context runs it), unless the timer was cancelled.
    ///
    /// - Parameter resettingExecutingNow: True for executor timers, whose work never runs "now";
    ///   false when the context already set the flag (a zero delay).
    func timerFired(resettingExecutingNow: Bool)

    /// The executor released the hold. If the timer neither fired nor was cancelled, the executor
    /// will never run it (it shut down): the target then cancels what waits on it.
    func timerReleased()
}

/// What a timer hands its executor: the executor's closure is its only owner, so its deinit means
/// that the executor released the closure. Released after running, or after a cancel, the timer
/// is done already and nothing happens; released unrun (a shut-down loop), the timer learns that
/// it will never fire.
///
/// The closure given to the executor captures only the hold, so the hold is the closure's context:
/// one small allocation per armed timer, and nothing else around the work.
///
/// Not generic: a generic hold for a timeout's generic box would cost a runtime metadata lookup
/// per timer.
@usableFromInline
final class PromiseTimerHold: Sendable {
    let target: any PromiseTimerTarget

    @usableFromInline
    init(_ target: any PromiseTimerTarget) {
        self.target = target
    }

    func fire(resettingExecutingNow: Bool = true) {
        target.timerFired(resettingExecutingNow: resettingExecutingNow)
    }

    deinit {
        target.timerReleased()
    }
}

extension PromiseTimerTarget {
    /// The executor that stored this timer calls it when it is due, on its own thread.
    @usableFromInline
    func timerFired() {
        timerFired(resettingExecutingNow: true)
    }

    /// Arms the timer kept in `state` (under the caller's lock, through `withState`): through the
    /// reservation if the executor made one; else in the executor's own timers if it stores them
    /// (``PromiseExecutor/storeTimer(_:after:)``: no allocation); else with
    /// `executor.scheduleSelfGuarded(after:_:)`.
    /// Does nothing if the timer was cancelled already (a cancel may race an arm). Arm once.
    @inline(__always)
    func armTimer(
        after delay: Duration, on executor: any PromiseExecutor,
        _ withState: (_ body: (inout PromiseTimerState) -> Void) -> Void
    ) {
        var begun: (isArming: Bool, reservation: (any PromiseTimerReservation)?) = (false, nil)
        withState { begun = $0.beginArming() }
        guard begun.isArming else { return }
        // The executor is called outside the lock: it takes its own locks, and it may run the
        // work on another thread before `schedule` even returns.
        if begun.reservation == nil, let id = executor.storeTimer(self, after: delay) {
            var keep = false
            withState { keep = $0.finishArming(storedAs: id) }
            // Cancelled while the executor stored it: remove it. Fired meanwhile (another thread
            // drives the executor): the identifier is stale, and cancelling it does nothing.
            if !keep { executor.cancelStoredTimer(id) }
            return
        }
        let hold = PromiseTimerHold(self)
        let handle: any PromiseScheduledWork
        if let reservation = begun.reservation {
            handle = reservation.arm(after: delay) { hold.fire() }
        } else {
            // The hold's target checks its own state before running anything (a cancelled or
            // settled timer does nothing), so the executor needs no guard around the work.
            handle = executor.scheduleSelfGuarded(after: delay) { hold.fire() }
        }
        var keep = false
        withState { keep = $0.finishArming(with: handle) }
        // Cancelled while `schedule` ran: cancel the timer. Fired meanwhile: cancelling a timer
        // that started does nothing.
        if !keep { handle.cancel() }
    }

    /// Runs the timer's work soon on `context` with a synchronous trigger, without a timer (a
    /// zero delay): inline on `.immediate` and `.nowOr(_:)` before returning, otherwise soon on
    /// the context, unless cancelled first.
    @inline(__always)
    func runTimerNow(
        on context: PromiseContext, _ withState: (_ body: (inout PromiseTimerState) -> Void) -> Void
    ) {
        var begun: (isArming: Bool, reservation: (any PromiseTimerReservation)?) = (false, nil)
        withState { begun = $0.beginArming() }
        guard begun.isArming else { return }
        begun.reservation?.cancel()
        let hold = PromiseTimerHold(self)
        context.execute(isSynchronous: true) { hold.fire(resettingExecutingNow: false) }
    }
}
