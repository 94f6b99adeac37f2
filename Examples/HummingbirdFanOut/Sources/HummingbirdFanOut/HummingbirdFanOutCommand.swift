import FanOutService
import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOPosix
import Prometheus
import TomorrowlandMetrics
import TomorrowlandTracing

/// `hummingbird-fanout [--host HOST] [--port PORT]`: serves the fan-out example until SIGINT or
/// SIGTERM (Hummingbird's `runService` shuts down gracefully on both), its metrics on
/// `GET /metrics` (swift-metrics bootstrapped with a Prometheus registry), its own NIO loops'
/// figures among them.
@main
struct HummingbirdFanOutCommand {
    static let usage = "usage: hummingbird-fanout [--host HOST] [--port PORT]   (default 127.0.0.1:8080)"

    static func main() async throws {
        var host = "127.0.0.1"
        var port = 8080
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--host":
                guard let value = arguments.popFirst() else { failUsage("--host needs a value") }
                host = value
            case "--port":
                guard let value = arguments.popFirst().flatMap(Int.init) else { failUsage("--port needs a number") }
                port = value
            case "-h", "--help":
                print(usage)
                return
            default:
                failUsage("unknown argument \(argument)")
            }
        }
        // Promise callbacks run with the ServiceContext of the request that registered them (the
        // span TracingMiddleware opens), so that a tracer's spans and log metadata follow the
        // request onto the loop.
        ServiceContextPropagation.start()
        var logger = Logger(label: "hummingbird-fanout")
        logger.logLevel = .info
        // Everything the process records through swift-metrics goes to the registry that
        // `GET /metrics` exports: the service's counters, Hummingbird's request metrics.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        // The server's own loops, one per core, each reporting its ticks, its timers and its
        // stalls (promise work holding the loop 50 ms or more) to the same registry, under the
        // dimension `loop` (the loop's thread name). Made after the bootstrap: the metrics take
        // the global factory when they are made.
        let loops = MultiThreadedEventLoopGroup(
            numberOfThreads: System.coreCount, metricsDelegate: NIOLoopMetricsDelegate())
        let application = FanOutApplication(logger: logger, metricsRegistry: registry).makeApplication(
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "hummingbird-fanout"),
            eventLoopGroup: loops)
        do {
            try await application.runService()
        } catch {
            try? await loops.shutdownGracefully()
            throw error
        }
        try await loops.shutdownGracefully()
    }

    static func failUsage(_ message: String) -> Never {
        FileHandle.standardError.write(Data("hummingbird-fanout: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
