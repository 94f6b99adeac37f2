import Tomorrowland

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
    /// The deadline is taken when this is called. Timers with equal deadlines run in scheduling
    /// order; a timer and ready work that are due at the same instant run in the order they were
    /// queued (the loop's scheduling core orders everything by (deadline, sequence)). All timers
    /// of a loop share one libevent timer, armed for the earliest deadline.
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

    /// Whether the calling thread is driving this loop; the same as ``inEventLoop``.
    public var isCurrent: Bool {
        inEventLoop
    }

    /// Schedules a timer and returns its concrete handle.
    func scheduleTimer(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> EventLoopScheduledWork {
        let (sum, overflow) = MonotonicClock.now().addingReportingOverflow(delay.schedulingNanoseconds)
        return scheduleTimer(atDeadline: overflow ? UInt64.max : sum, work)
    }

    /// Schedules a timer unless the loop was shut down (nil then), for the loop's promise forms.
    func scheduleTimer(
        after delay: Duration, ifOpen: Bool, _ work: @escaping @Sendable () -> Void
    ) -> EventLoopScheduledWork? {
        let (sum, overflow) = MonotonicClock.now().addingReportingOverflow(delay.schedulingNanoseconds)
        let deadline = overflow ? UInt64.max : sum
        let handle = EventLoopScheduledWork(loop: self)
        let timerWork = LoopWork.closure {
            if handle.begin() { work() }
        }
        // Unowned: only the loop runs this, and work left in a dead loop's queue is released unrun.
        let accepted = performOnLoop { [unowned self] in
            guard handle.isPending, !isShuttingDown else { return }
            handle.timerID = core.schedule(at: deadline, timerWork)
        }
        return accepted ? handle : nil
    }

    /// Schedules a timer for `deadline` on ``MonotonicClock`` and returns its handle.
    func scheduleTimer(atDeadline deadline: UInt64, _ work: @escaping @Sendable () -> Void) -> EventLoopScheduledWork {
        let handle = EventLoopScheduledWork(loop: self)
        // The timer's work checks the handle first: an off-loop cancel marks the handle before
        // the loop has removed the timer.
        let timerWork = LoopWork.closure {
            if handle.begin() { work() }
        }
        if inEventLoop {
            guard !isShutDown else {
                handle.markCancelled()
                refuseLateWork(timerWork)
                return handle
            }
            handle.timerID = core.schedule(at: deadline, timerWork)
        } else {
            let accepted = enqueue(
                // Unowned: only the loop runs this; a dead loop releases it unrun, so queued
                // work never keeps a loop alive.
                .closure { [unowned self] in
                    guard handle.isPending else { return }
                    handle.timerID = core.schedule(at: deadline, timerWork)
                })
            if !accepted { handle.markCancelled() }
        }
        return handle
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
