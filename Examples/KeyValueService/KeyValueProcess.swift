import Logging
import Tomorrowland
import TomorrowlandLoop

/// loopkv as a process: its server, and what the process does with the signals that ask it to
/// stop. The daemon runs one on its own loops; `loopkv-sim` runs one on a simulated host, whose
/// network sends the signals, so a graceful restart there takes the daemon's own path.
///
/// On the first of `signals` (heard on the server's first loop): "graceful shutdown: stopping"
/// is logged, the server stops (no new clients; each client takes the replies already produced,
/// then is closed), and once it stopped, or once `configuration.shutdownGrace` is over on that
/// loop's clock (the remaining clients are then closed at once), ``exited`` is fulfilled: the
/// environment ends the process there (the daemon shuts its loops down and returns; a simulation
/// ends the host). Later signals do nothing: the watchers stay until the loops shut down.
public final class KeyValueProcess: Sendable {
    /// The server the process runs.
    public let server: KeyValueServer
    /// The first signal that asked the process to stop, on the server's first loop; cancelled if
    /// the loops shut down before one came.
    public let shutdownRequested: Promise<Int32, EventLoopError>
    /// Fulfilled once the process may exit after a signal: the server stopped, or its grace
    /// period is over.
    public let exited: Promise<Void, NoError>
    private let exit: Promise<Void, NoError>.Resolver
    private let logger: Logger

    /// A process for `server`; the signal watchers are in place when this returns, so a signal
    /// sent from then on starts the graceful shutdown. Then ``start()`` it.
    ///
    /// - Parameters:
    ///   - server: The server, not started yet.
    ///   - signals: The signals that stop the process; `SIGTERM` and `SIGINT` by default.
    ///   - logger: Where the shutdown is reported.
    public init(server: KeyValueServer, signals: [Int32] = TerminationSignals.standard, logger: Logger) {
        self.server = server
        self.logger = logger
        (exited, exit) = Promise<Void, NoError>.makeWithResolver()
        let loop = server.group.loops[0]
        shutdownRequested = TerminationSignals.first(of: signals, on: loop)
        shutdownRequested.tap(on: .loop(loop)) { [self] result in
            guard case .value = result else { return }
            stop(on: loop)
        }
    }

    /// Starts the server: a promise of the port it listens on, rejected with the first
    /// listener's error.
    public func start() -> Promise<UInt16, any Error> {
        server.start()
    }

    /// The graceful shutdown, on the loop that heard the signal.
    private func stop(on loop: EventLoop) {
        logger.info("graceful shutdown: stopping")
        // The timeout passes its cancel request to the stop, which then closes the clients left.
        server.stop().timeout(on: .loop(loop), delay: server.configuration.shutdownGrace)
            .always(on: .immediate) { [exit] _ in exit.fulfill(with: ()) }
    }
}
