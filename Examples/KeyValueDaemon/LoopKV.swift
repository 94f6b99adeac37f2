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

    @Option(
        help:
            "Log the number of keys every this many seconds (0: never); counted off the loops, on a Dispatch queue.")
    var statsInterval: Double = 0

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard loops >= 1 else { throw ValidationError("--loops must be at least 1") }
        guard maxClients >= 1 else { throw ValidationError("--max-clients must be at least 1") }
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must not be negative") }
        guard maxRequestBytes >= 64 else { throw ValidationError("--max-request-bytes must be at least 64") }
        guard statsInterval >= 0 else { throw ValidationError("--stats-interval must not be negative") }
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

        // A parent may start us with SIGTERM/SIGINT blocked (test runners do; the mask is
        // inherited across exec), and then they would stay pending forever. Unblock them before
        // the loop threads exist: threads inherit this thread's mask.
        TerminationSignals.unblock()

        let server = KeyValueServer(configuration: configuration, logger: logger)
        let port: UInt16
        switch waitForResult(of: server.start()) {
        case .value(let bound):
            port = bound
        case .error(let error):
            logger.critical(
                "cannot listen", metadata: ["host": "\(bind)", "port": "\(self.port)", "error": "\(error)"])
            server.group.syncShutdownGracefully()
            throw ExitCode.failure
        case .cancelled:
            logger.critical("cannot listen: the loops shut down")
            server.group.syncShutdownGracefully()
            throw ExitCode.failure
        }
        if statsInterval > 0 {
            KeyspaceStatsReporter(
                store: server.store, loop: server.group.loops[0],
                interval: .nanoseconds(Int64(statsInterval * 1e9)), logger: logger
            ).start()
        }

        // The first SIGTERM or SIGINT stops the server; later ones change nothing (the watchers
        // stay until the group shuts down). Watched before "listening" is logged: a supervisor
        // (or a test) that signals as soon as it reads that line must not kill the process.
        let signalLoop = server.group.loops[0]
        let stopped = TerminationSignals.first(on: signalLoop).flatMapResult(on: .loop(signalLoop)) { result in
            switch result {
            case .value(let signal): logger.info("signal \(signal): stopping")
            case .error(let error): logger.critical("cannot watch signals: \(error)")
            case .cancelled: break
            }
            return server.stop()
        }
        logger.info("listening on \(bind):\(port)", metadata: ["loops": "\(loops)"])
        _ = waitForResult(of: stopped)
        server.group.syncShutdownGracefully()
        logger.info("stopped")
    }
}

/// Blocks the calling thread (the main thread, which drives no loop) until `promise` resolves.
private func waitForResult<Value, Failure>(of promise: Promise<Value, Failure>) -> PromiseResult<Value, Failure> {
    let resolved = DispatchSemaphore(value: 0)
    promise.tap(on: .immediate) { _ in resolved.signal() }
    resolved.wait()
    // Resolution happens before the signal, the signal before this read.
    guard let result = promise.result else { preconditionFailure("a resolved promise has a result") }
    return result
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
