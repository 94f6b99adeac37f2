#if Metrics
    import CoreMetrics
    import Tomorrowland

    /// The pending-promise report's figures through swift-metrics: a gauge of the recorded root
    /// promises still pending and one of the oldest one's age, set each time ``update()`` is
    /// called while the tracking is on.
    ///
    /// The figures are those of `PendingPromiseTracking.summary()`: the root promises the
    /// tracking recorded (every one, or one in N with sampling) that are still pending, process
    /// wide. Nothing is recorded on its own: call ``update()`` where the figures are read, just
    /// before a pull backend exports them (a Prometheus scrape handler) or on a timer of your own
    /// for a push backend.
    ///
    /// ```swift
    /// let pendingPromises = PendingPromiseMetrics()  // tracking on: TOMORROWLAND_PENDING_PROMISES=1
    /// // in the scrape handler:
    /// pendingPromises.update()
    /// registry.emit(into: &buffer)
    /// ```
    ///
    /// Costs: while the tracking is off, ``update()`` reads one flag (a relaxed atomic load) and
    /// records nothing, so the gauges keep their last values (if the tracking was never on, none:
    /// a backend such as Prometheus then exports a zero that means nothing, so make these metrics
    /// only when the tracking is on). While it is on, ``update()`` pays for
    /// `PendingPromiseTracking.summary()` (the registry's lock and each recorded promise's in
    /// turn, no list built) and two gauge recordings. The promises themselves pay only the
    /// tracking's own cost.
    public final class PendingPromiseMetrics: Sendable {
        /// The label of each gauge, as created.
        public let labels: Labels

        private let pendingPromises: Gauge
        private let oldestAge: Gauge

        /// Creates the two gauges; records nothing until ``update()``.
        ///
        /// - Parameters:
        ///   - labelPrefix: The start of each gauge's label (see ``Labels``).
        ///   - dimensions: Dimensions both gauges carry (a service's name, say); none by default.
        ///   - factory: Where the gauges go: the global `MetricsSystem.factory` (the one
        ///     `MetricsSystem.bootstrap(_:)` set) by default; tests pass a factory of their own.
        public init(
            labelPrefix: String = "tomorrowland",
            dimensions: [(String, String)] = [],
            factory: any MetricsFactory = MetricsSystem.factory
        ) {
            labels = Labels(prefix: labelPrefix)
            pendingPromises = Gauge(label: labels.pendingPromises, dimensions: dimensions, factory: factory)
            oldestAge = Gauge(label: labels.oldestPendingAge, dimensions: dimensions, factory: factory)
        }

        /// Sets both gauges from `PendingPromiseTracking.summary()` if the tracking is on; does
        /// nothing if it is off.
        ///
        /// Safe from any thread; two calls at once may record in either order.
        ///
        /// - Returns: The summary recorded; nil when the tracking is off and nothing was read.
        @discardableResult
        public func update() -> PendingPromiseSummary? {
            // The off path: one relaxed load (the switch every root promise reads too).
            guard PendingPromiseTracking.isOn else { return nil }
            let summary = PendingPromiseTracking.summary()
            pendingPromises.record(summary.count)
            oldestAge.record(summary.oldestAge.map(Self.seconds) ?? 0)
            return summary
        }

        /// Destroys both gauges (`destroy()`: the backend may drop their series). What
        /// ``update()`` records afterwards goes to gauges the backend may no longer export.
        public func destroy() {
            pendingPromises.destroy()
            oldestAge.destroy()
        }

        private static func seconds(_ duration: Duration) -> Double {
            let (seconds, attoseconds) = duration.components
            return Double(seconds) + Double(attoseconds) / 1e18
        }
    }

    extension PendingPromiseMetrics {
        /// The labels of the pending-promise gauges, from a prefix.
        public struct Labels: Sendable, Hashable {
            /// The label both others start with, then `_`.
            public var prefix: String

            /// Labels starting with `prefix`.
            public init(prefix: String) {
                self.prefix = prefix
            }

            /// Gauge: the recorded root promises still pending (`<prefix>_pending_promises`).
            public var pendingPromises: String { prefix + "_pending_promises" }
            /// Gauge: the age of the oldest of them in seconds, 0 when none is pending
            /// (`<prefix>_oldest_pending_promise_age_seconds`).
            public var oldestPendingAge: String { prefix + "_oldest_pending_promise_age_seconds" }
        }
    }
#endif
