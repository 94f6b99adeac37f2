import ArgumentParser
import Dispatch
import Foundation
import KeyValueCore
import Logging
import Tomorrowland
import TomorrowlandLoop

/// `loopkv`: a Redis-protocol (RESP2) key-value server on Tomorrowland's event loop.
@main
struct LoopKV: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopkv",
        abstract: "A Redis-protocol key-value server on Tomorrowland's libevent loop.",
        discussion: """
            Speaks RESP2 to redis-cli, redis-benchmark and Redis client libraries: PING, ECHO, GET, \
            SET (EX, PX, NX, XX, KEEPTTL, GET), DEL, EXISTS, INCR, DECR, EXPIRE, PEXPIRE, TTL, PTTL, \
            DBSIZE, FLUSHALL, QUIT, INFO, COMMAND. SIGTERM or SIGINT stops it cleanly (exit 0).
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

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard loops >= 1 else { throw ValidationError("--loops must be at least 1") }
        guard maxClients >= 1 else { throw ValidationError("--max-clients must be at least 1") }
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must not be negative") }
        guard maxRequestBytes >= 64 else { throw ValidationError("--max-request-bytes must be at least 64") }
    }

    func run() throws {
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

        // A parent may start us with SIGTERM/SIGINT blocked (a blocked mask is inherited across
        // exec; test runners do this), and then they would stay pending forever. Unblock them
        // before the loop threads exist: threads inherit this thread's mask.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)

        let server = KeyValueServer(configuration: configuration, logger: logger)
        do {
            try server.start()
        } catch {
            logger.critical("cannot listen", metadata: ["host": "\(bind)", "port": "\(port)", "error": "\(error)"])
            server.group.syncShutdownGracefully()
            throw ExitCode.failure
        }
        logger.info("listening on \(bind):\(server.port)", metadata: ["loops": "\(loops)"])

        let finished = DispatchSemaphore(value: 0)
        let signalLoop = server.group.loops[0]
        // A second SIGTERM during shutdown changes nothing.
        let signalled = LockedValue(false)
        signalLoop.execute {
            for signal in [SIGTERM, SIGINT] {
                do {
                    try signalLoop.watch(signal: signal) { number in
                        guard
                            signalled.withLock({ seen in
                                defer { seen = true }; return !seen
                            })
                        else { return }
                        logger.info("signal \(number): stopping")
                        server.stop { finished.signal() }
                    }
                } catch {
                    logger.critical("cannot watch signal \(signal): \(error)")
                    finished.signal()
                }
            }
        }
        finished.wait()
        server.group.syncShutdownGracefully()
        logger.info("stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
