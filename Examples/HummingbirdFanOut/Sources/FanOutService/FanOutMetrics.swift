import CoreMetrics
import Prometheus
import Tomorrowland
import TomorrowlandMetrics

/// The service's own metrics, recorded through swift-metrics into a Prometheus registry that
/// `GET /metrics` exports in Prometheus's text format.
///
/// Exported, from the start (every series at zero until something happens):
/// - `fanout_backend_events_total{backend, event}` (counter): each backend call's events as
///   ``BackendCallLog`` records them (`event` = `started`, `completed`, `failed`, `cancelled`);
/// - `fanout_quotes_total{outcome}` (counter): each `GET /quote` answered, by ``QuoteOutcome``.
///
/// And, only when the pending-promise report was on when these metrics were made (the
/// environment variable `TOMORROWLAND_PENDING_PROMISES`, or `PendingPromiseTracking.start`), the
/// process's pending-promise gauges from `TomorrowlandMetrics`' `PendingPromiseMetrics`, read at
/// each scrape: `tomorrowland_pending_promises` and
/// `tomorrowland_oldest_pending_promise_age_seconds`. With the report off they are not exported
/// at all (a zero would mean nothing) and a scrape reads nothing of the tracking.
///
/// Whatever else the process records through the global `MetricsSystem` lands in the same
/// registry when the program bootstraps `MetricsSystem` with a `PrometheusMetricsFactory` over
/// ``registry``, as `hummingbird-fanout` does (Hummingbird's `MetricsMiddleware`: `hb_requests`,
/// `http_server_request_duration`, …).
public final class FanOutMetrics: Sendable {
    /// Where the metrics are; `GET /metrics` emits it.
    public let registry: PrometheusCollectorRegistry
    /// The pending-promise gauges; nil when the report was off at ``init(registry:backends:)``.
    public let pendingPromises: PendingPromiseMetrics?

    private let backendEvents: [String: [BackendEvent.Kind: CoreMetrics.Counter]]
    private let quotes: [QuoteOutcome: CoreMetrics.Counter]

    /// Creates every series in `registry`, at zero.
    ///
    /// - Parameters:
    ///   - registry: Where the metrics go: a registry of their own by default (each test's
    ///     service has its own); the program passes the one it bootstrapped `MetricsSystem`
    ///     with.
    ///   - backends: The backends' names, each a value of the `backend` dimension.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), backends: [String]) {
        self.registry = registry
        let factory = PrometheusMetricsFactory(registry: registry)
        var backendEvents: [String: [BackendEvent.Kind: CoreMetrics.Counter]] = [:]
        for backend in backends {
            for kind in BackendEvent.Kind.allCases {
                backendEvents[backend, default: [:]][kind] = CoreMetrics.Counter(
                    label: "fanout_backend_events_total", dimensions: [("backend", backend), ("event", kind.rawValue)],
                    factory: factory)
            }
        }
        self.backendEvents = backendEvents
        var quotes: [QuoteOutcome: CoreMetrics.Counter] = [:]
        for outcome in QuoteOutcome.allCases {
            quotes[outcome] = CoreMetrics.Counter(
                label: "fanout_quotes_total", dimensions: [("outcome", outcome.rawValue)], factory: factory)
        }
        self.quotes = quotes
        pendingPromises = PendingPromiseTracking.isOn ? PendingPromiseMetrics(factory: factory) : nil
    }

    /// Counts `event` (a backend not named at creation is not counted).
    public func record(_ event: BackendEvent) {
        backendEvents[event.backend]?[event.kind]?.increment()
    }

    /// Counts one `GET /quote` answered with `outcome`.
    public func record(_ outcome: QuoteOutcome) {
        quotes[outcome]?.increment()
    }

    /// Everything in ``registry`` in Prometheus's text format (version 0.0.4), the pending-promise
    /// gauges read first.
    public func exposition() -> [UInt8] {
        pendingPromises?.update()
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
