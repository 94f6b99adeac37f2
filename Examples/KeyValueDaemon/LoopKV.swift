import ArgumentParser
import KeyValueCore
import KeyValueService
import Logging
import Tomorrowland
import TomorrowlandLoop

/// `loopkv`: a Redis-protocol (RESP2) key-value server on Tomorrowland's event loop.
@main
struct LoopKV: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopkv",
        abstract: "A Redis-protocol key-value server on Tomorrowland's libevent loop.",
        discussion: """
            Speaks RESP2 to redis-cli, redis-benchmark and Redis client libraries: PING, ECHO, GET, \
            SET (EX, PX, NX, XX, KEEPTTL, GET), DEL, EXISTS, INCR, DECR, EXPIRE, PEXPIRE, TTL, PTTL, \
            DBSIZE, FLUSHALL, QUIT, INFO, COMMAND. SIGTERM or SIGINT stops it cleanly (exit 0): no \
            new clients, the replies already produced are sent (within --shutdown-grace), then it exits.
            """)

    @Option(help: "TCP port; 0 picks a free one (the log line 'listening on HOST:PORT' tells which).")
    var port: UInt16 = 6379

    @Option(help: "Address to listen on.")
    var bind = "127.0.0.1"

    @Option(help: "Event loops (threads); connections are spread over them, the keys are shared.")
    var loops = 1

    @Option(help: "Most clients connected at once; further clients get an error and are closed.")
    var maxClients = 10_000

    @Option(help: "Close clients idle for this many seconds (0: never).")
    var idleTimeout: Double = 0

    @Option(help: "Largest request accepted, in bytes; larger ones get an error and the client is closed.")
    var maxRequestBytes = 64 * 1024 * 1024

    @Option(
        help:
            "Log the number of keys every this many seconds (0: never); counted off the loops, on a Dispatch queue.")
    var statsInterval: Double = 0

    @Option(
        help:
            "Seconds a graceful shutdown (SIGTERM, SIGINT) waits for clients to take their last replies before closing them."
    )
    var shutdownGrace: Double = 5

    @Option(
        help:
            "Log a warning for each piece of loop work that holds its loop this many milliseconds or longer (0: no stall detection); INFO counts them."
    )
    var stallThreshold: Double = 0

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard loops >= 1 else { throw ValidationError("--loops must be at least 1") }
        guard maxClients >= 1 else { throw ValidationError("--max-clients must be at least 1") }
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must not be negative") }
        guard maxRequestBytes >= 64 else { throw ValidationError("--max-request-bytes must be at least 64") }
        guard statsInterval >= 0 else { throw ValidationError("--stats-interval must not be negative") }
        guard shutdownGrace >= 0 else { throw ValidationError("--shutdown-grace must not be negative") }
        guard stallThreshold >= 0 else { throw ValidationError("--stall-threshold must not be negative") }
    }

    func run() async throws {
        // Before the loops' threads exist, which inherit this mask: a parent that started us with
        // SIGTERM blocked would otherwise leave it pending forever.
        TerminationSignals.unblock()
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "loopkv")
        var configuration = KeyValueServerConfiguration()
        configuration.host = bind
        configuration.port = port
        configuration.loopCount = loops
        configuration.maxClients = maxClients
        configuration.idleTimeout = idleTimeout > 0 ? .milliseconds(Int64(idleTimeout * 1000)) : nil
        configuration.maxRequestBytes = maxRequestBytes
        configuration.shutdownGrace = .milliseconds(Int64(shutdownGrace * 1000))

        let server = KeyValueServer(
            configuration: configuration, group: EventLoopGroup(loopCount: loops), clock: .monotonic, logger: logger)
        // INFO's `# Loops` section reads each loop's tick totals, counted only while tick
        // statistics are on. Their cost: two readings of the monotonic clock per tick and one per
        // libevent callback (a client's read or write event), a few relaxed atomic stores per
        // tick; under redis-benchmark's pipelined load a tick serves many requests, so that is a
        // few tens of nanoseconds per tick against the microseconds its requests take.
        for loop in server.group.loops {
            loop.enableTickStatistics()
            if stallThreshold > 0 {
                loop.enableStallDetection(threshold: .microseconds(Int64(stallThreshold * 1000))) { stall in
                    logger.warning("\(stall)")
                }
            }
        }
        // The signal watchers are in place before "listening" is logged: a supervisor (or a
        // test) that sends SIGTERM as soon as it reads that line gets the graceful shutdown.
        let process = KeyValueProcess(server: server, logger: logger)
        let port: UInt16
        switch await process.start().resolvedResult {
        case .value(let bound):
            port = bound
        case .error(let error):
            logger.critical(
                "cannot listen", metadata: ["host": "\(bind)", "port": "\(self.port)", "error": "\(error)"])
            _ = await server.group.shutdownGracefully().resolvedResult
            throw ExitCode.failure
        case .cancelled:
            logger.critical("cannot listen: the loops shut down")
            _ = await server.group.shutdownGracefully().resolvedResult
            throw ExitCode.failure
        }
        if statsInterval > 0 {
            KeyspaceStatsReporter(
                store: server.store, loop: server.group.loops[0],
                interval: .nanoseconds(Int64(statsInterval * 1e9)), logger: logger
            ).start()
        }

        logger.info("listening on \(bind):\(port)", metadata: ["loops": "\(loops)"])
        _ = await process.exited.resolvedResult
        _ = await server.group.shutdownGracefully().resolvedResult
        logger.info("stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
