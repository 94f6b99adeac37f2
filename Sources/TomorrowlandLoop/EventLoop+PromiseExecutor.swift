import Tomorrowland
internal import TomorrowlandScheduling

extension EventLoop: PromiseExecutor {
    /// Runs `work` on the loop's thread, soon; the same as ``execute(_:)`` (after shutdown,
    /// `work` is released without running).
    public func submit(_ work: @escaping @Sendable () -> Void) {
        enqueue(.closure(work))
    }

    /// Runs a promise callback on the loop's thread, soon, like ``submit(_:)->()``, without
    /// allocating: the loop queues the job itself.
    ///
    /// After shutdown the job is abandoned on the calling thread
    /// (`PromiseJob.abandon()`): the callback does not run, and the promise it
    /// would have resolved ends cancelled.
    public func submit(job: consuming any PromiseJob) {
        enqueue(.promiseJob(consume job))
    }

    /// Runs `work` on the loop's thread once `delay` has passed on the loop's monotonic clock.
    ///
    /// The timer rule, the same on `TestLoop`'s virtual clock:
    /// - **When the delay starts.** Scheduled by work the loop runs, the delay counts from the
    ///   time the loop read its clock for the current tick (as libuv and libevent do), so timers
    ///   with equal delays scheduled in one tick share a deadline. From another thread, or from a
    ///   watcher's handler, it counts from the clock read in this call.
    /// - **Order.** The timers that are due when the loop looks at its clock run in
    ///   (deadline, scheduling order), before the work their callbacks submit. A zero (or
    ///   negative) delay joins the ready work behind what was already submitted, ahead of what is
    ///   submitted after this call. All timers of a loop share one libevent timer, armed for the
    ///   earliest deadline.
    ///
    /// The returned handle's `cancel()` is safe from any thread:
    /// - on the loop's thread it removes the timer at once (O(log n)) and releases `work`;
    /// - on another thread it marks the timer cancelled, so `work` cannot start once `cancel()`
    ///   has returned, and hops to the loop to remove the timer and release `work` there.
    ///
    /// Shutdown cancels pending timers without running them. Scheduling on a loop that was shut
    /// down returns a handle whose work never runs (it is released at once, on the calling
    /// thread), like ``execute(_:)`` returning `false`.
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        scheduleTimer(after: delay, work)
    }

    /// Runs `work` on the loop's thread once `delay` has passed, as ``schedule(after:_:)`` does,
    /// for work that checks by itself whether it is still wanted (the promise core's timers).
    ///
    /// The loop stores `work` as it is, without the closure around it that checks the handle
    /// first: one allocation fewer per timer. The handle's `cancel()` on the loop's thread still
    /// removes the timer at once and releases `work`; from another thread it hops to the loop to
    /// do so, and `work` may start meanwhile (it then does nothing, by its own check).
    public func scheduleSelfGuarded(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) -> any PromiseScheduledWork {
        let handle = EventLoopScheduledWork(loop: self)
        // Stored as it is: the work never starts the handle, so the handle's `cancel()` after the
        // work ran still reaches the loop, finds the timer gone (its ID is stale) and removes
        // nothing.
        return insertTimer(handle, deadline: deadline(after: delay), reportsRefusal: true, .closure(work))
    }

    /// Keeps a promise timer (a `timeout`, `delay`, `Promise(on:…after:)` or `retry` on this loop)
    /// in the loop's timers as it is, when called on the loop's thread: no closure, no handle, no
    /// allocation. The timer rule of ``schedule(after:_:)`` applies (deadline, order).
    ///
    /// When due, the loop calls `timer.timerFired()` on its thread. Shutdown releases a pending
    /// stored timer unrun with `timer.timerReleased()` (the promise waiting on it ends cancelled).
    ///
    /// Returns `nil`, storing nothing, on another thread (only the loop's thread reaches its
    /// timers, and the identifier is needed at once) and after shutdown: the promise core then
    /// arms the timer with ``scheduleSelfGuarded(after:_:)``, which goes through the loop's inbox,
    /// or refuses it.
    public func storeTimer(_ timer: any PromiseTimerJob, after delay: Duration) -> PromiseTimerID? {
        guard inEventLoop && !isShutDown else { return nil }
        // On the loop's thread: the round's time if a round runs, else the clock.
        let nanoseconds = core.nanoseconds(of: delay)
        let deadline = core.deadlineInRound(after: nanoseconds) ?? clockDeadline(after: nanoseconds)
        return core.schedule(at: deadline, .promiseTimer(timer))
    }

    /// Removes a timer stored with ``storeTimer(_:after:)`` and releases the loop's reference to
    /// it, unrun, if it is still pending: at once on the loop's thread, through a hop to the loop
    /// from another thread (the timer guards itself meanwhile: it does nothing once cancelled).
    /// Does nothing after shutdown, which released every timer.
    public func cancelStoredTimer(_ id: PromiseTimerID) {
        LoopTimerReference<EventLoopTimerAccess>(loop: self, id: id).cancel()
    }

    /// Whether the calling thread is driving this loop; the same as ``inEventLoop``.
    public var isCurrent: Bool {
        inEventLoop
    }

    /// The deadline, on the loop's clock, of a timer scheduled now with `delay`: from the
    /// current round's time inside a round on the loop's thread, from a fresh clock reading
    /// anywhere else (the round's time would be stale there).
    func deadline(after delay: Duration) -> UInt64 {
        // The core (and its conversion of the last delay) only on the loop's thread.
        guard inEventLoop else { return clockDeadline(after: delay.schedulingNanoseconds) }
        let nanoseconds = core.nanoseconds(of: delay)
        return core.deadlineInRound(after: nanoseconds) ?? clockDeadline(after: nanoseconds)
    }

    /// Schedules a timer and returns its concrete handle.
    func scheduleTimer(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> EventLoopScheduledWork {
        scheduleTimer(atDeadline: deadline(after: delay), work)
    }

    /// Schedules a timer unless the loop was shut down (nil then), for the loop's promise forms.
    func scheduleTimer(
        after delay: Duration, ifOpen: Bool, _ work: @escaping @Sendable () -> Void
    ) -> EventLoopScheduledWork? {
        let handle = scheduleTimer(atDeadline: deadline(after: delay), reportsRefusal: false, work)
        return handle.isPending ? handle : nil
    }

    /// Schedules a timer for `deadline` on the loop's clock and returns its handle, cancelled if
    /// the loop was shut down; `reportsRefusal` says whether that refusal writes the loop's one
    /// diagnostic line (the promise forms report with a cancelled promise instead).
    func scheduleTimer(
        atDeadline deadline: UInt64, reportsRefusal: Bool = true, _ work: @escaping @Sendable () -> Void
    ) -> EventLoopScheduledWork {
        let handle = EventLoopScheduledWork(loop: self)
        // The timer's work checks the handle first: an off-loop cancel marks the handle before
        // the loop has removed the timer.
        let timerWork = LoopWork.closure {
            if handle.begin() { work() }
        }
        return insertTimer(handle, deadline: deadline, reportsRefusal: reportsRefusal, timerWork)
    }

    /// Gives `timerWork` to the loop's timers (through the inbox from another thread) and records
    /// where it is in `handle`; marks `handle` cancelled instead if the loop was shut down.
    @inline(__always)
    private func insertTimer(
        _ handle: EventLoopScheduledWork, deadline: UInt64, reportsRefusal: Bool, _ timerWork: LoopWork
    ) -> EventLoopScheduledWork {
        if inEventLoop {
            guard !isShutDown else {
                handle.markCancelled()
                if reportsRefusal { refuseLateWork(timerWork) }
                return handle
            }
            handle.timerID = core.schedule(at: deadline, timerWork)
        } else if !enqueueTimerIntoInbox(handle, deadline: deadline, timerWork) {
            handle.markCancelled()
        }
        return handle
    }
}

/// The handle ``EventLoop/schedule(after:_:)`` returns: cancels one timer (the scheduling engine's
/// one cancellable timer handle).
typealias EventLoopScheduledWork = LoopTimerHandle<EventLoopTimerAccess>

/// How the timer handles reach an ``EventLoop``'s timers: in its core, on its thread.
enum EventLoopTimerAccess: LoopTimerAccess {
    static func reachesTimers(of loop: EventLoop) -> Bool {
        loop.inEventLoop
    }

    static func removeTimer(_ id: PromiseTimerID, from loop: EventLoop) {
        // The removed timer is released here, at once, outside any lock.
        _ = loop.core.cancel(id)
    }

    /// Through the inbox, quietly (the loop's own follow-up work): after shutdown there is no
    /// timer left to remove.
    static func hop(to loop: EventLoop, _ body: @escaping @Sendable () -> Void) {
        _ = loop.submitOnLoop(body)
    }
}

/// The event loop as a promise context.
extension PromiseContext {
    /// The context that runs callbacks on `loop`'s thread: `.executor(loop)`.
    ///
    /// Callbacks submitted from the loop's own thread join its local FIFO and run after the task
    /// in progress, in the same tick; timers (`timeout`, `delay`, `Promise(on:…after:)`) are loop
    /// timers.
    public static func loop(_ loop: EventLoop) -> PromiseContext {
        .executor(loop)
    }
}

extension EventLoop {
    /// The time `nanoseconds` from now on the loop's clock, saturating: the deadline of a timer
    /// scheduled outside the loop's rounds.
    ///
    /// Out of line: the clock reading's buffer would give every caller a stack check, also on
    /// the path inside a round, which never reads the clock.
    @inline(never)
    func clockDeadline(after nanoseconds: UInt64) -> UInt64 {
        let (sum, overflow) = currentTime().addingReportingOverflow(nanoseconds)
        return overflow ? UInt64.max : sum
    }
}
