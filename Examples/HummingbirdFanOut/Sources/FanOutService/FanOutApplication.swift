import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus

/// The fan-out service as a Hummingbird application: its backends, its log, its routes.
///
/// Routes:
/// - `GET /quote?item=&inventory_ms=&pricing_ms=&timeout_ms=&fail=`: asks both backends on the
///   request's event loop; 200 with the ``Quote`` as JSON, 504 when the deadline passes first,
///   502 when a backend fails. A client that hangs up cancels the backend calls still running.
/// - `GET /stats`: the backends' call counts (``BackendStats``).
/// - `GET /metrics`: the process's metrics in Prometheus's text format (``FanOutMetrics``).
public struct FanOutApplication: Sendable {
    /// Where every backend call is recorded.
    public let log: BackendCallLog
    /// The fan-out over the two backends.
    public let service: QuoteService
    /// The counters `GET /metrics` exports, with everything else in their registry.
    public let metrics: FanOutMetrics
    private let logger: Logger

    /// Makes the service's backends, log and metrics.
    ///
    /// - Parameters:
    ///   - logger: Where the service logs.
    ///   - metricsRegistry: Where its metrics go and what `GET /metrics` exports: a registry of
    ///     its own by default; the program passes the one it bootstrapped `MetricsSystem` with.
    public init(logger: Logger, metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        let log = BackendCallLog()
        let metrics = FanOutMetrics(registry: metricsRegistry, backends: ["inventory", "pricing"])
        self.log = log
        self.metrics = metrics
        self.logger = logger
        service = QuoteService(
            inventory: SimulatedBackend(name: "inventory", log: log, metrics: metrics, logger: logger),
            pricing: SimulatedBackend(name: "pricing", log: log, metrics: metrics, logger: logger))
    }

    /// The router with the service's routes. Handlers run in Hummingbird's handler tasks; the
    /// promises they start run on the request's NIO event loop.
    ///
    /// Every request runs in a span of its own (Hummingbird's `TracingMiddleware`, through the
    /// tracer the process bootstrapped; none by default), which makes the span's context
    /// `ServiceContext.current` in the handler. With `ServiceContextPropagation` on (the
    /// executable turns it on), the promise callbacks the handler registers run on the loop with
    /// that context too: a logger whose metadata provider reads it tags their lines with the
    /// request's trace.
    public func makeRouter() -> Router<FanOutRequestContext> {
        let router = Router(context: FanOutRequestContext.self)
        router.add(middleware: TracingMiddleware())
        let service = self.service
        let log = self.log
        let metrics = self.metrics
        // Hummingbird's request metrics, through the global `MetricsSystem`: exported with the
        // rest when the program bootstrapped it over `metrics.registry`, dropped otherwise.
        router.add(middleware: MetricsMiddleware())
        router.get("quote") { request, context -> Quote in
            let quoteRequest: QuoteRequest
            do {
                quoteRequest = try QuoteRequest(query: request.uri.queryParameters)
            } catch {
                metrics.record(.badRequest)
                throw error
            }
            let quote = service.quote(quoteRequest, on: context.eventLoop)
            switch try await quote.resultCancellingOnHangUp(of: request) {
            case .value(let quote):
                metrics.record(.quoted)
                return quote
            case .error(.timedOut):
                metrics.record(.timedOut)
                throw HTTPError(.gatewayTimeout, message: "the backends did not answer within \(quoteRequest.timeout)")
            case .error(.rejected(.failed(let backend))):
                metrics.record(.backendFailed)
                throw HTTPError(.badGateway, message: "backend \(backend) failed")
            case .cancelled:
                // The client hung up: nobody reads this, Hummingbird just finishes the request.
                metrics.record(.clientClosed)
                throw HTTPError(.init(code: 499, reasonPhrase: "Client Closed Request"))
            }
        }
        router.get("stats") { _, _ -> BackendStats in
            BackendStats(log: log, backends: [service.inventory.name, service.pricing.name])
        }
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        return router
    }

    /// The Hummingbird application serving ``makeRouter()`` at `configuration.address`, on
    /// `eventLoopGroup`.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen, and Hummingbird's other settings.
    ///   - eventLoopGroup: The loops the server's connections and their promises run on: NIO's
    ///     shared `MultiThreadedEventLoopGroup.singleton` by default; the program passes a group
    ///     of its own whose metrics delegate reports each loop's figures (`NIOLoopMetricsDelegate`).
    ///   - onServerRunning: Called once the server listens, with its channel (whose
    ///     `localAddress` has the port when `configuration` asked for port 0).
    public func makeApplication(
        configuration: ApplicationConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: makeRouter(), configuration: configuration, onServerRunning: onServerRunning,
            eventLoopGroupProvider: .shared(eventLoopGroup), logger: logger)
    }
}
