#if NIO
    import NIOCore
    import NIOPosix
    import Synchronization
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// A ``NIOEventLoopExecutor``'s stall detection and tick counting: what the user turned on,
    /// the totals, the running work the loop publishes for the watchdog, and the watchdog.
    ///
    /// The executor's paths read ``isActive`` (one relaxed load and a predictable branch per NIO
    /// task they run or queue) and take their monitored variants, out of line, only when it is
    /// set: stall detection is on, or ``NIOLoopTickStatistics`` counts the loop's ticks.
    ///
    /// `@unchecked Sendable`, the state split three ways: `shared` is behind its lock; the
    /// totals, the threshold, `isActive` and the publication are atomics; the fields marked
    /// loop-confined are touched only on the loop's thread. NIOInvariants: "The loop's thread
    /// only".
    final class NIOLoopMonitor: StallWatchdogClient, @unchecked Sendable {
        /// What the user turned on, and the watchdog, under one lock.
        struct Shared {
            /// Where stalls go, nil while stall detection is off.
            var stallReport: (@Sendable (NIOLoopStall) -> Void)?
            var watchdog: StallWatchdog?
            /// Whether ``NIOLoopTickStatistics`` counts this loop's ticks (set once, for good).
            var countsTicks = false
            /// Whether a callback that tells the loop's shutdown is armed.
            var watchesShutdown = false
            /// Set when the loop shut down: no watchdog starts after it.
            var isClosed = false
        }

        let shared = LockedValue(Shared())
        /// Whether stall detection is on or ticks are counted: the executor's one check.
        let isActive = Atomic<Bool>(false)
        /// ``isActive``'s value, for tests.
        var isActiveForTests: Bool { isActive.load(ordering: .relaxed) }
        /// The stall threshold in nanoseconds, 0 while stall detection is off.
        let stallThreshold = Atomic<UInt64>(0)
        /// What runs on the loop, for the watchdog.
        let publication = StallPublication()

        // MARK: Totals (written on the loop's thread, read from any thread)

        private let tickCount = Atomic<UInt64>(0)
        private let itemCount = Atomic<UInt64>(0)
        private let busyNanoseconds = Atomic<UInt64>(0)
        private let waitingNanoseconds = Atomic<UInt64>(0)

        // MARK: Loop-confined

        /// Whether the loop's ticks are counted (the loop-side copy of `Shared.countsTicks`).
        @exclusivity(unchecked) private var countsTicksOnLoop = false
        /// The executor's NIO tasks that ran work (drains of its FIFO, firings of its timers)
        /// since the last tick was recorded, and the pieces of work they ran.
        @exclusivity(unchecked) private var executorTasks = 0
        @exclusivity(unchecked) private var executorItems = 0

        // MARK: Running work (loop's thread)

        /// Runs `work`, published to the watchdog and timed when stall detection is on
        /// (`threshold` is ``stallThreshold`` as the caller loaded it, 0 when off).
        func run(_ work: consuming LoopWork, threshold: UInt64) {
            guard threshold != 0 else {
                Self.perform(work)
                return
            }
            let identity = LoopWorkIdentity(work)
            let start = StallPublication.now()
            let number = publication.publish(identity, since: start)
            Self.perform(work)
            let end = StallPublication.now()
            publication.publish(.idle, since: 0)
            if end &- start >= threshold {
                report(
                    number: number, identity: identity, duration: end &- start, threshold: threshold, isFinished: true)
            }
        }

        /// Runs `work` as the executor's paths do without a monitor.
        private static func perform(_ work: consuming LoopWork) {
            switch consume work {
            case .closure(let body): body()
            case .promiseJob(let job): job.run()
            case .promiseTimer(let timer): timer.timerFired()
            case .job: preconditionFailure("NIOEventLoopExecutor runs no Swift Concurrency jobs")
            }
        }

        /// Counts one of the executor's NIO tasks that ran `items` pieces of work, for the tick's
        /// figures.
        func countExecutorTask(items: Int) {
            guard countsTicksOnLoop else { return }
            executorTasks &+= 1
            executorItems &+= items
        }

        /// Reports a stall unless it was reported already.
        private func report(
            number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64, isFinished: Bool
        ) {
            guard let report = shared.withLock({ $0.stallReport }), publication.claimReport(number: number) else {
                return
            }
            report(
                NIOLoopStall(
                    work: identity.name, duration: .nanoseconds(Int64(clamping: duration)), isFinished: isFinished,
                    threshold: .nanoseconds(Int64(clamping: threshold))))
        }

        // MARK: StallWatchdogClient (watchdog thread)

        func watchdogThreshold() -> UInt64? {
            let threshold = stallThreshold.load(ordering: .relaxed)
            return threshold == 0 ? nil : threshold
        }

        func reportStillRunning(number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64) {
            report(number: number, identity: identity, duration: duration, threshold: threshold, isFinished: false)
        }

        // MARK: Ticks (loop's thread)

        /// Starts counting the executor's work per tick, for ``NIOLoopTickStatistics``. On the
        /// loop's thread, between two ticks.
        func startCountingTicks() {
            countsTicksOnLoop = true
            executorTasks = 0
            executorItems = 0
            shared.withLock { shared in
                shared.countsTicks = true
                isActive.store(true, ordering: .relaxed)
            }
        }

        /// Adds the tick NIO reports to the totals; returns its figures, the executor's work
        /// counted piece by piece.
        func recordTick(_ info: NIOEventLoopTickInfo) -> NIOLoopTick {
            // The executor's tasks are among NIO's; each counts as the work it ran instead.
            let others = info.numberOfTasks > executorTasks ? info.numberOfTasks - executorTasks : 0
            let (sum, overflow) = others.addingReportingOverflow(executorItems)
            let items = overflow ? Int.max : sum
            executorTasks = 0
            executorItems = 0
            let busy = UInt64(clamping: (info.endTime - info.startTime).nanoseconds)
            let waiting = UInt64(clamping: info.sleepTime.nanoseconds)
            // One writer: plain load-and-store, no read-modify-write instruction needed.
            tickCount.store(tickCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            itemCount.store(itemCount.load(ordering: .relaxed) &+ UInt64(items), ordering: .relaxed)
            busyNanoseconds.store(busyNanoseconds.load(ordering: .relaxed) &+ busy, ordering: .relaxed)
            waitingNanoseconds.store(waitingNanoseconds.load(ordering: .relaxed) &+ waiting, ordering: .relaxed)
            return NIOLoopTick(
                eventLoopID: info.eventLoopID, itemCount: items, busyTime: .nanoseconds(Int64(clamping: busy)),
                waitingTime: .nanoseconds(Int64(clamping: waiting)))
        }

        /// The totals, from any thread.
        var totals: NIOLoopTickTotals {
            NIOLoopTickTotals(
                tickCount: tickCount.load(ordering: .relaxed),
                itemCount: itemCount.load(ordering: .relaxed),
                busyTime: .nanoseconds(Int64(clamping: busyNanoseconds.load(ordering: .relaxed))),
                waitingTime: .nanoseconds(Int64(clamping: waitingNanoseconds.load(ordering: .relaxed))),
                stallCount: publication.stallCount)
        }

        // MARK: Settings (any thread)

        /// Turns stall detection on for `eventLoop`'s executor, or changes its threshold and
        /// handler; starts the watchdog, and, the first time, arms a callback that tells the
        /// loop's shutdown. Does nothing once the loop shut down.
        func enableStallDetection(
            threshold: UInt64, report: @escaping @Sendable (NIOLoopStall) -> Void, on eventLoop: any EventLoop
        ) {
            let (started, watchShutdown) = shared.withLock { shared -> (StallWatchdog?, Bool) in
                guard !shared.isClosed else { return (nil, false) }
                shared.stallReport = report
                stallThreshold.store(threshold, ordering: .relaxed)
                isActive.store(true, ordering: .relaxed)
                let watchShutdown = !shared.watchesShutdown
                shared.watchesShutdown = true
                guard shared.watchdog == nil else { return (nil, watchShutdown) }
                let watchdog = StallWatchdog(client: self, ownerName: "NIOEventLoopExecutor")
                shared.watchdog = watchdog
                return (watchdog, watchShutdown)
            }
            // Outside the lock: the watchdog reads the settings on each wake-up.
            started?.start()
            if watchShutdown {
                do {
                    _ = try eventLoop.scheduleCallback(at: .distantFuture, handler: NIOLoopShutdownWatch(monitor: self))
                } catch {
                    // The loop shut down already.
                    close()
                }
            }
        }

        /// Turns stall detection off and stops the watchdog, waiting for its thread to end.
        func disableStallDetection() {
            let stopped = shared.withLock { shared -> StallWatchdog? in
                shared.stallReport = nil
                stallThreshold.store(0, ordering: .relaxed)
                isActive.store(shared.countsTicks, ordering: .relaxed)
                return shared.watchdog.take()
            }
            stopped?.stop()
        }

        /// The loop shut down: stops the watchdog and ignores later settings.
        func close() {
            let stopped = shared.withLock { shared -> StallWatchdog? in
                shared.isClosed = true
                shared.stallReport = nil
                stallThreshold.store(0, ordering: .relaxed)
                return shared.watchdog.take()
            }
            stopped?.stop()
        }
    }

    /// A NIO callback armed at the distant future on a loop whose executor detects stalls, to
    /// learn that the loop shut down (a NIO loop tells it no other way): NIO cancels the callback
    /// then, or drops it if the loop had shut down already, and releases it either way; the
    /// release stops the watchdog.
    struct NIOLoopShutdownWatch: NIOScheduledCallbackHandler, Sendable {
        private let token: Token

        init(monitor: NIOLoopMonitor) {
            token = Token(monitor: monitor)
        }

        /// Only a test's clock (an `EmbeddedEventLoop` moved to the distant future) gets here;
        /// the release that follows closes the monitor, as at a shutdown.
        func handleScheduledCallback(eventLoop: some EventLoop) {}

        /// The loop shuts down; the release that follows closes the monitor.
        func didCancelScheduledCallback(eventLoop: some EventLoop) {}

        /// Owned by NIO alone, through the callback: released when NIO is done with it.
        private final class Token: Sendable {
            let monitor: NIOLoopMonitor

            init(monitor: NIOLoopMonitor) {
                self.monitor = monitor
            }

            deinit {
                monitor.close()
            }
        }
    }
#endif
