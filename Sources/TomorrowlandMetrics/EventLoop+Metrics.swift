#if Metrics
    import CoreMetrics
    import TomorrowlandLoop

    extension EventLoop {
        /// Reports this loop's figures through swift-metrics, under the dimension
        /// `loop` = `name`, until the returned object is detached or the loop shuts down.
        ///
        /// Turns on the loop's tick statistics and, unless the configuration says otherwise, its
        /// stall detection at 50 ms; see ``EventLoopMetrics`` for what that costs and
        /// <doc:LoopMetrics> for each metric. Takes effect at the loop's next tick. Safe from any
        /// thread.
        ///
        /// - Parameters:
        ///   - name: The loop's name, the value of the loop dimension (unique among the loops that
        ///     report to one backend, or their series mix).
        ///   - configuration: Labels, extra dimensions, the stall threshold, and the observer and
        ///     report to call after the metrics' own.
        ///   - factory: Where the metrics go: the global `MetricsSystem.factory` (the one
        ///     `MetricsSystem.bootstrap(_:)` set) by default; tests pass a factory of their own.
        /// - Returns: The attached metrics; ``EventLoopMetrics/detach()`` stops them.
        @discardableResult
        public func enableMetrics(
            name: String,
            configuration: EventLoopMetrics.Configuration = .init(),
            factory: any MetricsFactory = MetricsSystem.factory
        ) -> EventLoopMetrics {
            EventLoopMetrics(loop: self, name: name, configuration: configuration, factory: factory)
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
            configuration: EventLoopMetrics.Configuration = .init(),
            factory: any MetricsFactory = MetricsSystem.factory
        ) -> [EventLoopMetrics] {
            loops.enumerated().map { index, loop in
                loop.enableMetrics(name: String(index), configuration: configuration, factory: factory)
            }
        }
    }
#endif
