import FanOutService
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle

/// The fan-out service listening on an ephemeral loopback port for the length of one test.
struct RunningFanOutServer {
    /// The service's backends and their log.
    let fanOut: FanOutApplication
    /// The port it listens on, at 127.0.0.1.
    let port: Int

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Starts the service, runs `body` with it, then shuts it down gracefully (also when `body`
    /// throws).
    ///
    /// - Parameters:
    ///   - serviceLogger: The logger the service logs its backend calls to; warnings only by
    ///     default.
    ///   - metricsRegistry: Where the service's metrics go: a registry of its own by default.
    ///   - eventLoopGroup: The server's loops: NIO's singleton group by default.
    static func with<Result: Sendable>(
        serviceLogger: Logger? = nil,
        metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        _ body: @Sendable (RunningFanOutServer) async throws -> Result
    ) async throws -> Result {
        var logger = Logger(label: "FanOutServiceTests")
        logger.logLevel = .warning
        let fanOut = FanOutApplication(logger: serviceLogger ?? logger, metricsRegistry: metricsRegistry)
        let (ports, portContinuation) = AsyncStream<Int?>.makeStream()
        let application = fanOut.makeApplication(
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            eventLoopGroup: eventLoopGroup
        ) { channel in
            portContinuation.yield(channel.localAddress?.port)
            portContinuation.finish()
        }
        let serviceGroup = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await serviceGroup.run() }
            do {
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next() ?? nil else {
                    throw ServerDidNotStart()
                }
                let result = try await body(RunningFanOutServer(fanOut: fanOut, port: port))
                await serviceGroup.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await serviceGroup.triggerGracefulShutdown()
                tasks.cancelAll()
                throw error
            }
        }
    }

    /// Waits until `backend` has had `count` events of `kind`, for at most `limit`.
    ///
    /// - Returns: False if `limit` passed first.
    func waitUntil(
        _ backend: String, _ kind: BackendEvent.Kind, count: Int = 1, within limit: Duration = .seconds(20)
    ) async -> Bool {
        let log = fanOut.log
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await log.waitUntil(backend: backend, kind: kind, count: count) }
            // A bound on a real-time wait, not a synchronisation: the test fails if it passes.
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

/// The server never reported a listening port.
struct ServerDidNotStart: Error {}
