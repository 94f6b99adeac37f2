import Hummingbird
import Logging
import NIOCore

/// The fan-out service as a Hummingbird application: its backends, its log, its routes.
///
/// Routes:
/// - `GET /quote?item=&inventory_ms=&pricing_ms=&timeout_ms=&fail=`: asks both backends on the
///   request's event loop; 200 with the ``Quote`` as JSON, 504 when the deadline passes first,
///   502 when a backend fails. A client that hangs up cancels the backend calls still running.
/// - `GET /stats`: the backends' call counts (``BackendStats``).
public struct FanOutApplication: Sendable {
    /// Where every backend call is recorded.
    public let log: BackendCallLog
    /// The fan-out over the two backends.
    public let service: QuoteService
    private let logger: Logger

    /// Makes the service's backends and log.
    public init(logger: Logger) {
        let log = BackendCallLog()
        self.log = log
        self.logger = logger
        service = QuoteService(
            inventory: SimulatedBackend(name: "inventory", log: log, logger: logger),
            pricing: SimulatedBackend(name: "pricing", log: log, logger: logger))
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
        router.get("quote") { request, context -> Quote in
            let quoteRequest = try QuoteRequest(query: request.uri.queryParameters)
            let quote = service.quote(quoteRequest, on: context.eventLoop)
            switch try await quote.resultCancellingOnHangUp(of: request) {
            case .value(let quote):
                return quote
            case .error(.timedOut):
                throw HTTPError(.gatewayTimeout, message: "the backends did not answer within \(quoteRequest.timeout)")
            case .error(.rejected(.failed(let backend))):
                throw HTTPError(.badGateway, message: "backend \(backend) failed")
            case .cancelled:
                // The client hung up: nobody reads this, Hummingbird just finishes the request.
                throw HTTPError(.init(code: 499, reasonPhrase: "Client Closed Request"))
            }
        }
        router.get("stats") { _, _ -> BackendStats in
            BackendStats(log: log, backends: [service.inventory.name, service.pricing.name])
        }
        return router
    }

    /// The Hummingbird application serving ``makeRouter()`` at `configuration.address`, on
    /// NIO's shared `MultiThreadedEventLoopGroup.singleton`.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen, and Hummingbird's other settings.
    ///   - onServerRunning: Called once the server listens, with its channel (whose
    ///     `localAddress` has the port when `configuration` asked for port 0).
    public func makeApplication(
        configuration: ApplicationConfiguration,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: makeRouter(), configuration: configuration, onServerRunning: onServerRunning, logger: logger)
    }
}
