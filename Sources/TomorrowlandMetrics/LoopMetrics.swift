#if Metrics
    import CoreMetrics
    import Tomorrowland

    /// One loop's figures reported through swift-metrics: how long each tick ran work and waited,
    /// how many items it ran, the work queued (an `EventLoop`'s) and the timers armed when it
    /// ended, and the stalls.
    ///
    /// - An `EventLoop`'s: made by `EventLoop.enableMetrics(name:configuration:factory:)` (one
    ///   loop) or `EventLoopGroup.enableMetrics(configuration:factory:)` (each loop of a group,
    ///   named by its index), and attached to its loop until ``detach()`` or the loop's shutdown.
    ///   The figures come from the loop's tick statistics and its stall detection
    ///   (`EventLoop.enableTickStatistics(observer:)`,
    ///   `EventLoop.enableStallDetection(threshold:report:)`): attaching turns them on, with the
    ///   metrics' own observer and report, which call the ones in the ``Configuration`` after
    ///   recording. A loop has one observer and one stall report, so turning either on again on
    ///   the same loop, or attaching a second `LoopMetrics`, replaces this one's.
    /// - A NIO loop's: made by `NIOLoopMetricsDelegate` at the loop's first tick, one per loop of
    ///   its group (`NIOLoopMetricsDelegate.metrics`).
    ///
    /// The <doc:LoopMetricsReference> article lists each metric, its type, its unit and its
    /// dimensions.
    ///
    /// Costs, for an `EventLoop`: the tick statistics' own (two readings of the monotonic clock
    /// per tick and one per libevent callback), then, on the loop's thread after each tick, two
    /// timer recordings, one recorder recording, two gauge recordings (each as costly as the
    /// metrics backend makes it) and one acquisition of the loop's inbox lock to count what other
    /// threads submitted. While detached, the loop pays the one branch per tick it pays with
    /// diagnostics off. A loop of a simulated host (`TomorrowlandSimulation`) measures nothing:
    /// its metrics are created but never recorded.
    public final class LoopMetrics: Sendable {
        /// The loop's name: the value of the ``Configuration/loopDimension`` dimension.
        public let name: String
        /// The label of each metric and its dimensions, as created.
        public let labels: Labels

        let instruments: LoopInstruments
        /// Turns off what the metrics turned on for their loop, at ``detach()``.
        private let turnOff: @Sendable () -> Void

        /// Metrics named `name` over `instruments`; `turnOff` runs once, at ``detach()``.
        init(name: String, labels: Labels, instruments: LoopInstruments, turnOff: @escaping @Sendable () -> Void) {
            self.name = name
            self.labels = labels
            self.instruments = instruments
            self.turnOff = turnOff
        }

        /// Stops recording: turns off what the metrics turned on (an `EventLoop`'s tick
        /// statistics; the loop's stall detection if ``Configuration/stallThreshold`` is not
        /// nil), then destroys the metrics (`destroy()`: the backend may drop their series).
        ///
        /// Safe from any thread, including the loop's and the stall report's; calling it again
        /// does nothing. The loop's `tickTotals` keep their values. A tick that ends while this
        /// runs records nothing. Nothing is left to turn off after the loop's shutdown, which
        /// turns the statistics and the stall detection off itself; detaching then only destroys
        /// the metrics.
        public func detach() {
            guard instruments.markDetached() else { return }
            turnOff()
            instruments.destroy()
        }

        /// Whether ``detach()`` was called.
        public var isDetached: Bool {
            !instruments.isAttached
        }
    }
#endif
