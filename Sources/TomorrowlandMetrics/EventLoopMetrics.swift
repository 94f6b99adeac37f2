#if Metrics
    import CoreMetrics
    import Tomorrowland
    import TomorrowlandLoop

    /// Per-loop figures of an `EventLoop` reported through swift-metrics: how long each tick ran
    /// work and waited, how many items it ran, the work queued and the timers armed when it ended,
    /// and the stalls.
    ///
    /// Made by `EventLoop.enableMetrics(name:configuration:factory:)` (one loop) or
    /// `EventLoopGroup.enableMetrics(configuration:factory:)` (each loop of a group, named by its
    /// index), and attached to its loop until ``detach()`` or the loop's shutdown. The
    /// <doc:LoopMetrics> article lists each metric, its type, its unit and its dimensions.
    ///
    /// The figures come from the loop's tick statistics and its stall detection
    /// (`EventLoop.enableTickStatistics(observer:)`, `EventLoop.enableStallDetection(threshold:report:)`):
    /// attaching turns them on, with the metrics' own observer and report, which call the ones in
    /// the ``Configuration`` after recording. A loop has one observer and one stall report, so
    /// turning either on again on the same loop, or attaching a second `EventLoopMetrics`, replaces
    /// this one's.
    ///
    /// Costs: the tick statistics' own (two readings of the monotonic clock per tick and one per
    /// libevent callback), then, on the loop's thread after each tick, two timer recordings, one
    /// recorder recording, two gauge recordings (each as costly as the metrics backend makes it)
    /// and one acquisition of the loop's inbox lock to count what other threads submitted. While
    /// detached, the loop pays the one branch per tick it pays with diagnostics off.
    ///
    /// A loop of a simulated host (`TomorrowlandSimulation`) measures nothing: its metrics are
    /// created but never recorded.
    public final class EventLoopMetrics: Sendable {
        /// The loop these metrics describe.
        public let loop: EventLoop
        /// The loop's name: the value of the ``Configuration/loopDimension`` dimension.
        public let name: String
        /// The label of each metric and its dimensions, as created.
        public let labels: Labels

        private let instruments: LoopInstruments
        /// Whether the metrics turned stall detection on, and so turn it off when detached.
        private let ownsStallDetection: Bool

        /// Attaches metrics to `loop`; see `EventLoop.enableMetrics(name:configuration:factory:)`.
        init(loop: EventLoop, name: String, configuration: Configuration, factory: any MetricsFactory) {
            self.loop = loop
            self.name = name
            labels = Labels(prefix: configuration.labelPrefix)
            let dimensions = configuration.dimensions + [(configuration.loopDimension, name)]
            let instruments = LoopInstruments(
                labels: labels, dimensions: dimensions, measuresQueuedWork: true, factory: factory)
            self.instruments = instruments
            ownsStallDetection = configuration.stallThreshold != nil

            let tickObserver = configuration.tickObserver
            // Unowned: the loop holds this observer (in its monitor's settings), so a strong
            // reference would be a cycle while the metrics are attached; the observer only ever
            // runs on the loop's thread, inside the loop's own tick, so the loop is alive then.
            loop.enableTickStatistics { [instruments, unowned loop] tick in
                if instruments.isAttached {
                    let occupancy = loop.occupancy
                    instruments.recordTick(
                        busyTime: tick.busyTime, waitingTime: tick.waitingTime, itemCount: tick.itemCount,
                        queuedWork: occupancy.queuedWorkCount, armedTimers: occupancy.armedTimerCount)
                }
                tickObserver?(tick)
            }
            if let threshold = configuration.stallThreshold {
                let stallReport = configuration.stallReport
                loop.enableStallDetection(threshold: threshold) { [instruments] stall in
                    instruments.recordStall()
                    stallReport?(stall)
                }
            }
        }

        /// Stops recording: turns the loop's tick statistics off, and its stall detection if
        /// these metrics turned it on (``Configuration/stallThreshold`` not nil), then destroys
        /// the metrics (`destroy()`: the backend may drop their series).
        ///
        /// Safe from any thread, including the loop's and the stall report's; calling it again
        /// does nothing. The loop's `tickTotals` keep their values. A tick that ends
        /// while this runs records nothing, and the loop stops measuring from its next tick.
        /// Nothing is left to detach after the loop's shutdown, which turns the statistics and the
        /// stall detection off itself; detaching then only destroys the metrics.
        public func detach() {
            guard instruments.markDetached() else { return }
            loop.disableTickStatistics()
            if ownsStallDetection { loop.disableStallDetection() }
            instruments.destroy()
        }

        /// Whether ``detach()`` was called.
        public var isDetached: Bool {
            !instruments.isAttached
        }
    }
#endif
