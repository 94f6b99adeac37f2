#if Metrics
    import CoreMetrics
    import Tomorrowland
    import TomorrowlandLoop

    extension EventLoop {
        /// Reports this loop's figures through swift-metrics, under the dimension
        /// `loop` = `name`, until the returned object is detached or the loop shuts down.
        ///
        /// Turns on the loop's tick statistics and, unless the configuration says otherwise, its
        /// stall detection at 50 ms; see ``LoopMetrics`` for what that costs and
        /// <doc:LoopMetricsReference> for each metric. Takes effect at the loop's next tick. Safe
        /// from any thread.
        ///
        /// - Parameters:
        ///   - name: The loop's name, the value of the loop dimension (unique among the loops that
        ///     report to one backend, or their series mix).
        ///   - configuration: Labels, extra dimensions, the stall threshold, and the observer and
        ///     report to call after the metrics' own.
        ///   - factory: Where the metrics go: the global `MetricsSystem.factory` (the one
        ///     `MetricsSystem.bootstrap(_:)` set) by default; tests pass a factory of their own.
        /// - Returns: The attached metrics; ``LoopMetrics/detach()`` stops them.
        @discardableResult
        public func enableMetrics(
            name: String,
            configuration: LoopMetrics.Configuration = .init(),
            factory: any MetricsFactory = MetricsSystem.factory
        ) -> LoopMetrics {
            let labels = LoopMetrics.Labels(prefix: configuration.labelPrefix)
            let dimensions = configuration.dimensions + [(configuration.loopDimension, name)]
            let instruments = LoopInstruments(
                labels: labels, dimensions: dimensions, measuresQueuedWork: true, factory: factory)
            let tickObserver = configuration.tickObserver
            // Unowned: the loop holds this observer (in its monitor's settings), so a strong
            // reference would be a cycle while the metrics are attached; the observer only ever
            // runs on the loop's thread, inside the loop's own tick, so the loop is alive then.
            enableTickStatistics { [instruments, unowned self] tick in
                if instruments.isAttached {
                    let occupancy = self.occupancy
                    instruments.recordTick(
                        busyTime: tick.busyTime, waitingTime: tick.waitingTime, itemCount: tick.itemCount,
                        queuedWork: occupancy.queuedWorkCount, armedTimers: occupancy.armedTimerCount)
                }
                tickObserver?(tick)
            }
            let ownsStallDetection = configuration.stallThreshold != nil
            if let threshold = configuration.stallThreshold {
                let stallReport = configuration.stallReport
                enableStallDetection(threshold: threshold) { [instruments] stall in
                    instruments.recordStall()
                    stallReport?(stall)
                }
            }
            return LoopMetrics(name: name, labels: labels, instruments: instruments) {
                self.disableTickStatistics()
                if ownsStallDetection { self.disableStallDetection() }
            }
        }
    }

    extension EventLoopGroup {
        /// Reports the figures of each of the group's loops through swift-metrics, each loop named
        /// by its index in `loops` (`0`, `1`, …), as
        /// `EventLoop.enableMetrics(name:configuration:factory:)` does for one loop.
        ///
        /// - Parameters:
        ///   - configuration: As for one loop; applies to every loop.
        ///   - factory: Where the metrics go: the global `MetricsSystem.factory` by default.
        /// - Returns: The attached metrics, one per loop, in the order of `loops`.
        @discardableResult
        public func enableMetrics(
            configuration: LoopMetrics.Configuration = .init(),
            factory: any MetricsFactory = MetricsSystem.factory
        ) -> [LoopMetrics] {
            loops.enumerated().map { index, loop in
                loop.enableMetrics(name: String(index), configuration: configuration, factory: factory)
            }
        }
    }
#endif
