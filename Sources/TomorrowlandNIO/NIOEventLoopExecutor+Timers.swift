#if NIO
    import NIOCore
    import Tomorrowland
    internal import TomorrowlandScheduling

    extension NIOEventLoopExecutor {
        /// Runs `work` on the loop's thread once `delay` has passed on the loop's clock (its `now`:
        /// the monotonic uptime clock, or an `EmbeddedEventLoop`'s virtual time).
        ///
        /// The executor keeps its timers in a heap of its own, ordered by (deadline, scheduling
        /// order), and arms one NIO scheduled callback for the earliest deadline; scheduling on the
        /// loop's thread costs no NIO call in the common case (a callback for an earlier or equal
        /// deadline is already armed). Scheduled by a timer's work, the delay counts from the time
        /// that firing read the clock, so equal delays share a deadline; anywhere else, from the
        /// loop's `now` read in this call. From another thread the timer reaches the heap through
        /// one `execute`.
        ///
        /// Order: the timers due when the callback fires run in (deadline, scheduling order), inside
        /// that one NIO task, before the work they submit to this executor. Relative to other NIO
        /// tasks, they run where NIO runs a due scheduled callback: in the tick that finds it due,
        /// interleaved with that tick's immediate tasks. A zero (or negative) delay runs in the
        /// next such tick, never inside this call.
        ///
        /// The returned handle's `cancel()` is safe from any thread: once it returns, `work`
        /// cannot start. On the loop's thread it removes the timer and releases `work` at once;
        /// from another thread it hops to the loop to do so.
        ///
        /// When the loop shuts down, pending timers are released without running. Scheduling on a
        /// loop that was shut down (or is gone) returns a handle whose work never runs; it is
        /// released at once (from another thread: when NIO drops the `execute`, on the calling
        /// thread).
        public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork
        {
            let handle = NIOLoopTimerHandle(loop: self)
            // The work checks the handle first: a cancel from another thread claims the handle
            // before the loop has removed the timer.
            scheduleTimer(handle, after: delay) {
                if handle.begin() { work() }
            }
            return handle
        }

        /// Runs `work` on the loop's thread once `delay` has passed, as ``schedule(after:_:)``
        /// does, for work that checks by itself whether it is still wanted (the promise core's
        /// timers: `timeout`, `delay`, `Promise(on:…after:)`).
        ///
        /// On the loop's thread the timer costs no allocation: the work is stored as it is, and the
        /// handle is a value (the executor and the timer's place in the heap). Its `cancel()` on the
        /// loop's thread removes the timer at once and releases `work`; from another thread it hops
        /// to the loop to do so, and `work` may start meanwhile (it then does nothing, by its own
        /// check).
        public func scheduleSelfGuarded(
            after delay: Duration, _ work: @escaping @Sendable () -> Void
        ) -> any PromiseScheduledWork {
            if isCurrent {
                return LoopTimerReference<NIOLoopTimerAccess>(
                    loop: self, id: timers.insert(at: timers.deadline(after: delay), work))
            }
            let handle = NIOLoopTimerHandle(loop: self)
            scheduleTimer(handle, after: delay, work)
            return handle
        }

        /// Keeps a promise timer (a `timeout`, `delay`, `Promise(on:…after:)` or `retry` on this
        /// loop) in the executor's timers as it is, when called on the loop's thread: no closure,
        /// no handle, no allocation. The order of ``schedule(after:_:)`` applies.
        ///
        /// When due, `timer.timerFired()` runs on the loop's thread; when the loop shuts down, a
        /// pending stored timer is released unrun with `timer.timerReleased()` (the promise
        /// waiting on it ends cancelled), also when that happens inside this call.
        ///
        /// Returns `nil`, storing nothing, on another thread (only the loop's thread reaches the
        /// timers, and the identifier is needed at once): the promise core then arms the timer
        /// with ``scheduleSelfGuarded(after:_:)``, which hops to the loop.
        public func storeTimer(_ timer: any PromiseTimerJob, after delay: Duration) -> PromiseTimerID? {
            guard isCurrent else { return nil }
            return timers.insert(at: timers.deadline(after: delay), work: .promiseTimer(timer))
        }

        /// Removes a timer stored with ``storeTimer(_:after:)`` and releases the executor's
        /// reference to it, unrun, if it is still pending: at once on the loop's thread, through
        /// a hop to the loop from another thread (the timer guards itself meanwhile: it does
        /// nothing once cancelled).
        public func cancelStoredTimer(_ id: PromiseTimerID) {
            LoopTimerReference<NIOLoopTimerAccess>(loop: self, id: id).cancel()
        }

        /// Inserts `work` into the loop's timers, at once on the loop's thread, through one
        /// `execute` from another thread, and records where it is in `handle`.
        private func scheduleTimer(
            _ handle: NIOLoopTimerHandle, after delay: Duration, _ work: @escaping @Sendable () -> Void
        ) {
            if isCurrent {
                handle.timerID = timers.insert(at: timers.deadline(after: delay), work)
                return
            }
            guard let eventLoop else {
                // The loop is gone: `work` is released on return.
                handle.markCancelled()
                return
            }
            // The delay counts from now, on the loop's clock, not from when the loop gets to it.
            let (deadline, overflow) = eventLoop.now.uptimeNanoseconds.addingReportingOverflow(
                delay.schedulingNanoseconds)
            let timers = self.timers
            // If the loop drops the closure (it was shut down), `work` is released with it.
            eventLoop.execute {
                // Cancelled before it got here: `work` is released with this closure.
                guard handle.isPending else { return }
                handle.timerID = timers.insert(at: overflow ? .max : deadline, work)
            }
        }
    }

    /// The handle of a timer of ``NIOEventLoopExecutor`` that needs one: every timer of
    /// `schedule(after:_:)`, and a self-guarded timer scheduled from another thread (its place in
    /// the heap is only known once the loop has inserted it). The scheduling engine's one
    /// cancellable timer handle, as `EventLoop`'s.
    typealias NIOLoopTimerHandle = LoopTimerHandle<NIOLoopTimerAccess>

    /// How the timer handles reach a ``NIOEventLoopExecutor``'s timers: in its heap, on the loop's
    /// thread.
    enum NIOLoopTimerAccess: LoopTimerAccess {
        static func reachesTimers(of executor: NIOEventLoopExecutor) -> Bool {
            executor.isCurrent
        }

        static func removeTimer(_ id: PromiseTimerID, from executor: NIOEventLoopExecutor) {
            executor.timers.remove(id)
        }

        /// Through one `execute`: a loop that is gone or shut down has released its timers
        /// already, and NIO drops the hop.
        static func hop(to executor: NIOEventLoopExecutor, _ body: @escaping @Sendable () -> Void) {
            executor.eventLoop?.execute(body)
        }
    }
#endif
