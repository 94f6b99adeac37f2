#if NIO
    import NIOCore
    import Tomorrowland
    internal import TomorrowlandScheduling

    extension NIOEventLoopExecutor {
        /// Turns on stall detection for this executor's work: a piece of work that holds the loop
        /// for `threshold` or longer is reported to `report`, once, with its name and how long it
        /// held the loop.
        ///
        /// A watchdog thread, started here and stopped by ``disableStallDetection()`` or when the
        /// loop shuts down, reports work that is still running past the threshold, while it runs:
        /// a promise callback that blocks the loop for 200 ms is reported roughly 50 to 100 ms
        /// into its run with the default threshold. Work that ends past the threshold before the
        /// watchdog looked is reported on the loop right after it ends. Work that ends within the
        /// threshold is never reported.
        ///
        /// What counts as a piece of work: what this executor runs on the loop, that is a promise
        /// callback or timer on `.nio(loop)`, and a closure given to ``submit(_:)`` or
        /// ``schedule(after:_:)``. Not NIO's own work (channel handlers, `EventLoopFuture`
        /// callbacks, closures given to the loop's `execute`): NIO has no hook to time its tasks
        /// one by one; ``NIOLoopTickStatistics`` gives each tick's busy time. A closure is named by
        /// its symbol, demangled from the binary's symbol table (`closure #1 in
        /// Server.handle(_:)`), when the binary is not stripped, by its binary and offset
        /// otherwise (one given to ``schedule(after:_:)`` by the executor's closure around it,
        /// see `LoopStall.work`); a promise callback or timer by its kind and types. Names
        /// are looked up only when a stall is reported.
        ///
        /// Off by default. While off, the executor pays one relaxed atomic load and a predictable
        /// branch per NIO task it runs (a drain of its queue, a firing of its timers) or queues
        /// from another thread, and no thread runs. While on, each piece of work costs two readings
        /// of the monotonic clock and a few relaxed atomic stores (the loop publishes what runs and
        /// since when; the watchdog reads it), work submitted from another thread one allocation
        /// (the closure that times it), and the watchdog wakes about once per threshold. Takes
        /// effect for the work that starts after this call; calling it again replaces the
        /// threshold and the handler.
        ///
        /// Does nothing once the loop is gone or shut down. The first call arms a NIO scheduled
        /// callback at `NIODeadline.distantFuture` on the loop, which NIO cancels when the loop
        /// shuts down: that is how the watchdog learns of it.
        ///
        /// - Parameters:
        ///   - threshold: How long a piece of work may hold the loop before it is reported; 50 ms
        ///     by default. Must be positive.
        ///   - report: Called with each stall: on the watchdog thread while the work still runs,
        ///     or on the loop's thread right after it ended (`LoopStall.isFinished`). Writes
        ///     one line to standard error by default. It must not wait for the loop (it would wait
        ///     for the work that stalls it, or stall it further).
        @preconcurrency
        public func enableStallDetection(
            threshold: Duration = .milliseconds(50),
            report: @escaping @Sendable (LoopStall) -> Void = LoopStall.writeToStandardError
        ) {
            precondition(
                threshold > .zero,
                "NIOEventLoopExecutor.enableStallDetection(threshold:report:) needs a positive threshold")
            guard let eventLoop else { return }
            guard monitor.enableStallDetection(threshold: threshold, report: report),
                !watchesShutdown.exchange(true, ordering: .relaxed)
            else { return }
            do {
                _ = try eventLoop.scheduleCallback(at: .distantFuture, handler: NIOLoopShutdownWatch(monitor: monitor))
            } catch {
                // The loop shut down already.
                monitor.close()
            }
        }

        /// Turns stall detection off and stops its watchdog thread, waiting for it to end (unless
        /// called from the report handler on that thread: it then ends when the handler returns).
        /// Safe from any thread.
        public func disableStallDetection() {
            monitor.disableStallDetection()
        }

        /// The loop's running totals: ticks, work run, time busy and waiting, stalls reported.
        ///
        /// The tick figures are counted while the loop's group has a ``NIOLoopTickStatistics`` as
        /// its metrics delegate, the stalls while stall detection
        /// (``enableStallDetection(threshold:report:)``) is on; zero otherwise. Safe from any
        /// thread: a few relaxed atomic loads.
        public var tickTotals: LoopTickTotals {
            monitor.totals
        }

        /// The timers this executor has armed on the loop (`timeout`, `delay`,
        /// ``schedule(after:_:)``), for the loop's metrics (`NIOLoopMetricsDelegate` in
        /// TomorrowlandMetrics). NIO's own scheduled tasks are not counted: NIO does not publish
        /// them.
        ///
        /// - Important: Call on the loop's thread only (the timer heap is the loop thread's
        ///   state; NIOInvariants: "The loop's thread only").
        package var armedTimerCountOnLoopThread: Int {
            timers.count
        }
    }

    /// A NIO callback armed at the distant future on a loop whose executor detects stalls, to
    /// learn that the loop shut down (a NIO loop tells it no other way): NIO cancels the callback
    /// then, or drops it if the loop had shut down already, and releases it either way; the
    /// release closes the monitor, which stops the watchdog.
    struct NIOLoopShutdownWatch: NIOScheduledCallbackHandler, Sendable {
        private let token: Token

        init(monitor: LoopMonitor) {
            token = Token(monitor: monitor)
        }

        /// Only a test's clock (an `EmbeddedEventLoop` moved to the distant future) gets here;
        /// the release that follows closes the monitor, as at a shutdown.
        func handleScheduledCallback(eventLoop: some EventLoop) {}

        /// The loop shuts down; the release that follows closes the monitor.
        func didCancelScheduledCallback(eventLoop: some EventLoop) {}

        /// Owned by NIO alone, through the callback: released when NIO is done with it.
        private final class Token: Sendable {
            let monitor: LoopMonitor

            init(monitor: LoopMonitor) {
                self.monitor = monitor
            }

            deinit {
                monitor.close()
            }
        }
    }
#endif
