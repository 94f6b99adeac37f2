import ArgumentParser
import Logging
import ProbeCore
import ServiceLifecycle
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandServiceLifecycle

/// `loopprobe`: probes TCP endpoints in rounds on an EventLoop, and logs every change of state
/// (first observation, up to down, down to up, with the latency).
///
/// The loop and the probe rounds are services of a swift-service-lifecycle `ServiceGroup`.
/// SIGTERM and SIGINT shut it down gracefully: the probes in flight are cancelled (through promise
/// cancellation, which closes their sockets), then the loop shuts down, and the process exits 0.
/// `--rounds N` exits 0 after N rounds.
@main
struct LoopProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopprobe",
        abstract: "Probes TCP endpoints on an event loop and logs when they go up or down.",
        discussion: """
            Each round connects to every endpoint at once. An attempt that does not connect within \
            --connect-timeout is cancelled; a failed attempt is retried --retries times after \
            --retry-delay. SIGTERM or SIGINT cancels the round in flight and exits 0.
            """
    )

    @Argument(help: "Endpoints to probe, as host:port ([::1]:port or ::1:port for IPv6).")
    var endpoints: [String]

    @Option(help: "Seconds from one round's start to the next.")
    var interval: Double = 5

    @Option(name: .customLong("connect-timeout"), help: "Seconds allowed for one connection attempt.")
    var connectTimeout: Double = 2

    @Option(help: "Extra attempts after a failed one, within a round.")
    var retries: Int = 1

    @Option(name: .customLong("retry-delay"), help: "Seconds to wait before a retry.")
    var retryDelay: Double = 0.2

    @Option(help: "Exit (status 0) after this many rounds; runs until SIGTERM/SIGINT otherwise.")
    var rounds: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard !endpoints.isEmpty else { throw ValidationError("Give at least one endpoint (host:port).") }
        for text in endpoints where ProbeEndpoint(parsing: text) == nil {
            throw ValidationError("'\(text)' is not host:port with a port in 1...65535.")
        }
        guard interval > 0, connectTimeout > 0, retryDelay >= 0 else {
            throw ValidationError("--interval and --connect-timeout must be positive, --retry-delay not negative.")
        }
        guard retries >= 0 else { throw ValidationError("--retries must be 0 or more.") }
        if let rounds, rounds < 1 { throw ValidationError("--rounds must be 1 or more.") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("Unknown --log-level '\(logLevel)'.")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "loopprobe")

        var configuration = ProbeScheduler.Configuration(endpoints: endpoints.compactMap(ProbeEndpoint.init(parsing:)))
        configuration.interval = .seconds(interval)
        configuration.connectTimeout = .seconds(connectTimeout)
        configuration.retries = retries
        configuration.retryDelay = .seconds(retryDelay)
        configuration.rounds = rounds

        // The loop runs on a thread of its own, as a service: it shuts down after the probe
        // rounds' service has ended (a ServiceGroup shuts its services down in reverse order).
        let loopService = EventLoopService(threadName: "loopprobe-loop")
        let loop = loopService.loop
        // The scheduler's timeout cancels late attempts; the connect's own deadline only backs it
        // up.
        let connect = tcpProber(on: loop, backstop: configuration.connectTimeout * 2)
        let scheduler = ProbeScheduler(
            configuration: configuration, executor: loop,
            prober: { endpoint in
                logger.debug("connecting to \(endpoint)")
                return connect(endpoint)
            },
            onTransition: { transition in
                if transition.status.isUp {
                    logger.info("\(transition.message)")
                } else {
                    logger.warning("\(transition.message)")
                }
            },
            onRound: { number, statuses in
                let up = statuses.filter(\.isUp).count
                logger.debug("round \(number): \(up) up, \(statuses.count - up) down")
            }
        )
        // The probe rounds. They start once the ServiceGroup traps SIGTERM and SIGINT; a graceful
        // shutdown (one of those signals) cancels the round in flight, through promise
        // cancellation, which closes the attempts' sockets. After `--rounds` rounds the service
        // ends, and the group shuts down gracefully.
        let endpointCount = configuration.endpoints.count
        let probing = ClosureService {
            logger.info(
                "probing \(endpointCount) endpoint(s) every \(interval) s (connect timeout \(connectTimeout) s, \(retries) retries)"
            )
            scheduler.start()
            let outcome = await withGracefulShutdownHandler {
                await scheduler.finished.resolvedResult
            } onGracefulShutdown: {
                scheduler.stop()
            }
            switch outcome {
            case .value(.completed(let count)): logger.info("done after \(count) round(s)")
            case .value(.stopped(let count)):
                logger.notice(
                    "graceful shutdown: cancelled the probes in flight, stopped after \(count) complete round(s)")
            case .error, .cancelled: logger.error("the scheduler ended without an outcome")
            }
        }
        let serviceGroup = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: loopService),
                    .init(service: probing, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await serviceGroup.run()
    }
}
