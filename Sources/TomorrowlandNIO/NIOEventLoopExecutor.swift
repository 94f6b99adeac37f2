#if NIO
    import NIOCore
    import Synchronization
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// Runs promise work on a SwiftNIO `EventLoop`: the executor behind
    /// ``Tomorrowland/PromiseContext/nio(_:)``.
    ///
    /// Work runs on the loop's thread, in submission order, never synchronously inside the call
    /// that submits it (not even on the loop's own thread): from another thread through the loop's
    /// `execute`, from the loop's own thread through a local FIFO that one NIO task drains in
    /// batches (`NIOLoopLocalQueue`: a callback hop costs no NIO task). Timers (`timeout`, `delay`)
    /// run on the loop's clock: the executor keeps them in a heap of its own and arms one NIO
    /// scheduled callback for the earliest deadline (`NIOLoopTimers`), so arming and cancelling a
    /// timer on the loop's thread costs no NIO call. Every closure this executor is given runs on
    /// the loop's thread.
    ///
    /// There is one executor per loop, which ``shared(for:)`` returns: the first use of a loop
    /// allocates it, later uses find it in a process-wide table. The executor refers to its loop
    /// weakly, so that the table does not keep every loop it ever saw alive: once the loop is
    /// gone, its entry is dropped (at a later insertion), and work still submitted through the
    /// executor is abandoned as after a shutdown.
    ///
    /// ## After the loop shut down
    ///
    /// A NIO loop that was shut down drops the closures it is given (NIO prints an error and
    /// releases them). The executor follows the library's late-work policy on top of that:
    /// - a promise callback aimed at such a loop is abandoned (`PromiseJob.abandon()`): it does not
    ///   run, and the promise it would have resolved ends cancelled;
    /// - plain work (``submit(_:)``) is released without running;
    /// - a timer's work is released without running, and its handle's `cancel()` does nothing.
    ///   When the loop shuts down, NIO cancels the executor's scheduled callback, and the timers
    ///   still pending are released unrun: a `timeout` or `delay` waiting on one ends cancelled.
    ///
    /// ## A serial executor
    ///
    /// The executor is a `SerialPromiseExecutor`: a NIO loop runs one task at a time
    /// on its one thread, the executor's local FIFO runs inside those tasks, and ``isCurrent`` is the
    /// loop's exact thread check. So `LoopBound` and `isolated(to:)` work on it, and
    /// the callbacks of one resolution bound for the loop go to it as one job (one entry of the
    /// local FIFO, or one NIO task from another thread).
    ///
    /// - Important: On an `EmbeddedEventLoop`, `inEventLoop` is always `true`, so ``isCurrent``
    ///   is too: that loop belongs to the one thread that drives it (NIO's own rule for it), and
    ///   only on that thread does the serial contract hold.
    public final class NIOEventLoopExecutor: SerialPromiseExecutor {
        // Weak: the shared table keeps executors alive, and a strong reference would keep every
        // loop ever used alive with them. A `weak let` is safe to load from any thread.
        private weak let weakEventLoop: (any EventLoop)?

        /// The loop's identity, for the shared table (stays valid after the loop is gone).
        let eventLoopID: ObjectIdentifier

        /// The executor for `eventLoop`, shared by every use of the loop.
        ///
        /// The first call for a loop allocates the executor; later calls take a lock and look it up
        /// (no allocation). Hot code can keep the result, or the context made from it.
        ///
        /// - Parameter eventLoop: The loop; any `EventLoop` (`MultiThreadedEventLoopGroup`'s,
        ///   `EmbeddedEventLoop`, a channel's loop...).
        /// - Returns: The executor that runs work on `eventLoop`'s thread.
        public static func shared(for eventLoop: any EventLoop) -> NIOEventLoopExecutor {
            NIOEventLoopExecutorTable.shared.executor(for: eventLoop)
        }

        /// Work submitted on the loop's own thread, drained in batches by one NIO task each.
        /// Internal for tests; touch only on the loop's thread.
        let local: NIOLoopLocalQueue

        /// The loop's timers (see `NIOLoopTimers`). Internal for tests; touch only on the loop's
        /// thread.
        let timers: NIOLoopTimers

        /// Stall detection and tick counting (see `NIOEventLoopExecutor+Monitoring.swift`),
        /// shared with ``local`` and ``timers``, which run the work.
        let monitor: LoopMonitor
        /// Whether a callback that tells the loop's shutdown to ``monitor`` is armed (see
        /// `NIOLoopShutdownWatch`): the first call that turns stall detection on arms it.
        let watchesShutdown = Atomic<Bool>(false)

        init(_ eventLoop: any EventLoop) {
            self.weakEventLoop = eventLoop
            self.eventLoopID = ObjectIdentifier(eventLoop)
            let monitor = LoopMonitor(loopKind: "NIO loop", ownerName: "NIOEventLoopExecutor")
            self.monitor = monitor
            self.local = NIOLoopLocalQueue(eventLoop: eventLoop, monitor: monitor)
            self.timers = NIOLoopTimers(loop: NIOUnretainedLoop.make(eventLoop), monitor: monitor)
        }

        /// The loop this executor runs work on, or `nil` once the loop has been deallocated.
        public var eventLoop: (any EventLoop)? {
            weakEventLoop
        }

        /// Runs `work` on the loop's thread, soon, never synchronously inside this call.
        ///
        /// From the loop's own thread, `work` joins the executor's local FIFO, which one NIO task
        /// drains (see `NIOLoopLocalQueue`: in submission order, up to 1024 items per NIO task);
        /// from another thread it is the loop's `execute`. After the loop shut down, `work` is
        /// released without running.
        public func submit(_ work: @escaping @Sendable () -> Void) {
            if local.isDrainingOnCurrentThread || local.isBoundToCurrentThread {
                local.append(.closure(work))
                return
            }
            guard let eventLoop = weakEventLoop else { return }
            if eventLoop.inEventLoop {
                local.append(.closure(work))
            } else if monitor.isActive.load(ordering: .relaxed) {
                executeMonitored(.closure(work), on: eventLoop)
            } else {
                eventLoop.execute(work)
            }
        }

        /// Runs a promise callback on the loop's thread, soon, like ``submit(_:)``.
        ///
        /// From the loop's own thread the job joins the local FIFO as it is (no allocation). From
        /// another thread it goes through the loop's `execute` in a box, one allocation: the box is
        /// the closure's only capture, so it serves as the closure's context. If the loop never
        /// runs the job (it was shut down, and NIO dropped the closure or the drain), the job is
        /// abandoned (`PromiseJob.abandon()`): the callback does not run and the promise it would
        /// have resolved ends cancelled.
        public func submit(job: consuming any PromiseJob) {
            // Inside this executor's drain (a callback resolving the next promise), or anywhere on
            // the thread of a loop whose drain chain is bound to it (a NIO task resolving a promise
            // between two drains), the thread is the loop's: no need to load the weak loop
            // reference.
            if local.isDrainingOnCurrentThread || local.isBoundToCurrentThread {
                local.append(.promiseJob(consume job))
                return
            }
            guard let eventLoop = weakEventLoop else {
                job.abandon()
                return
            }
            if eventLoop.inEventLoop {
                local.append(.promiseJob(consume job))
                return
            }
            let box = NIOPromiseJobBox(consume job)
            if monitor.isActive.load(ordering: .relaxed) {
                let monitor = self.monitor
                eventLoop.execute { box.run(monitoredBy: monitor) }
                return
            }
            eventLoop.execute { box.run() }
        }

        /// Queues `work` on the loop's `execute` inside a closure that runs it through the monitor
        /// (stall detection is on, or the loop's ticks are counted). Out of line: the path with
        /// the monitor off stays as it was.
        @inline(never)
        private func executeMonitored(_ work: LoopWork, on eventLoop: any EventLoop) {
            let monitor = self.monitor
            // One NIO task running one piece of work: nothing to count for the tick figures.
            eventLoop.execute {
                monitor.adoptSettingsIfChanged()
                monitor.run(work, threshold: monitor.confined.stallThreshold) { $0.runWithoutJobs() }
            }
        }

        /// Whether the calling thread is the loop's thread: the loop's `inEventLoop` (`false` once
        /// the loop is gone).
        public var isCurrent: Bool {
            local.isDrainingOnCurrentThread || local.isBoundToCurrentThread || (weakEventLoop?.inEventLoop ?? false)
        }
    }

    extension Duration {
        /// This duration as a NIO `TimeAmount`, in whole nanoseconds, clamped to `Int64`'s range.
        var nioTimeAmount: TimeAmount {
            let (seconds, attoseconds) = components
            let (wholeSeconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            if overflow { return .nanoseconds(seconds < 0 ? .min : .max) }
            let (sum, sumOverflow) = wholeSeconds.addingReportingOverflow(attoseconds / 1_000_000_000)
            if sumOverflow { return .nanoseconds(seconds < 0 ? .min : .max) }
            return .nanoseconds(sum)
        }
    }
#endif
