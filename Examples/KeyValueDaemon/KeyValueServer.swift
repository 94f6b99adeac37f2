import Dispatch
import KeyValueCore
import Logging
import Tomorrowland
import TomorrowlandLoop

/// The `loopkv` server: one listener per loop of an `EventLoopGroup` (SO_REUSEPORT when there
/// are several, so the kernel spreads connections), connections served on the loop that accepted
/// them, and one ``ShardedStore`` that every loop shares (see its documentation for why).
///
/// - Important: `@unchecked Sendable`: `listeners` is written once in ``start()`` before any
///   other method runs; `clients[i]`'s contents are only touched on loop `i`'s thread (the array
///   itself never changes, so loops never write to shared storage); `clientCount` is
///   behind its lock.
final class KeyValueServer: @unchecked Sendable {
    let configuration: KeyValueServerConfiguration
    let group: EventLoopGroup
    let store: ShardedStore
    private let logger: Logger
    private let sweeper: ExpirySweeper
    private var listeners: [TCPListener] = []
    private let clients: [ClientRegistry]
    private let clientCount = LockedValue(0)
    private let stopping = LockedValue(false)

    init(configuration: KeyValueServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        group = EventLoopGroup(loopCount: configuration.loopCount)
        store = ShardedStore(shardCount: configuration.loopCount == 1 ? 1 : 64, clock: .monotonic)
        sweeper = ExpirySweeper(store: store, executor: group.loops[0])
        clients = (0..<configuration.loopCount).map { _ in ClientRegistry() }
    }

    /// The port the listeners are bound to (the kernel's pick when the configuration says 0).
    private(set) var port: UInt16 = 0

    /// Binds the listeners (blocking the calling thread until every loop has bound its own).
    func start() throws(TCPError) {
        var options = TCPListenerOptions()
        options.reusePort = configuration.loopCount > 1
        // The parser refuses oversized requests with a reply; the connection's own bound is a
        // backstop above it (a full request plus a read's worth of pipelined ones).
        options.connection.maxInputBytes = configuration.maxRequestBytes + 1 << 20
        let host = configuration.host
        var boundPort = configuration.port
        for (index, loop) in group.loops.enumerated() {
            let (port, listenerOptions) = (boundPort, options)
            let listener = try onLoop(loop) { [self] () throws(TCPError) -> TCPListener in
                try TCPListener.listen(host: host, port: port, on: loop, options: listenerOptions) {
                    [self] connection in
                    accept(connection, loopIndex: index)
                }
            }
            boundPort = listener.localPort
            listeners.append(listener)
        }
        port = boundPort
        sweeper.start()
    }

    /// Runs `body` on `loop` and waits for its result (listen must run on the loop's thread).
    private func onLoop<R: Sendable>(
        _ loop: EventLoop, _ body: @escaping @Sendable () throws(TCPError) -> R
    )
        throws(TCPError) -> R
    {
        // Value and error in two optionals rather than one Optional<Result>: valgrind reported a
        // branch on the uninitialised spare bytes of that nested enum's payload (a false positive
        // of the enum layout, but a report nonetheless).
        let value = LockedValue<R?>(nil)
        let failure = LockedValue<TCPError?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            do throws(TCPError) {
                let made = try body()
                value.withLock { $0 = made }
            } catch {
                failure.withLock { $0 = error }
            }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        return value.withLock { $0! }
    }

    private func accept(_ connection: TCPConnection, loopIndex: Int) {
        let admitted = clientCount.withLock { count -> Bool in
            guard count < configuration.maxClients else { return false }
            count += 1
            return true
        }
        guard admitted else {
            // As Redis: tell the client why, then close.
            logger.warning("max clients reached, refusing", metadata: ["peer": "\(connection.remoteDescription)"])
            connection.enqueue(Array("-ERR max number of clients reached\r\n".utf8))
            connection.close(afterFlushing: true)
            return
        }
        let client = ClientConnection(
            connection: connection, processor: CommandProcessor(store: store, infoProvider: infoText),
            maxRequestBytes: configuration.maxRequestBytes, idleTimeout: configuration.idleTimeout, logger: logger)
        let id = ObjectIdentifier(client)
        clients[loopIndex].open[id] = client
        logger.debug("client connected", metadata: ["peer": "\(connection.remoteDescription)"])
        client.start { [self] in
            clients[loopIndex].open[id] = nil
            clientCount.withLock { $0 -= 1 }
        }
        if stopping.withLock({ $0 }) { client.close(afterFlushing: true) }
    }

    private func infoText() -> String {
        "loops:\(configuration.loopCount)\r\n\r\n# Clients\r\nconnected_clients:\(clientCount.withLock { $0 })\r\n"
    }

    /// Stops accepting, lets every client take the replies already produced, closes them, and
    /// calls `completion` (on a loop thread) once all are closed or the grace period is over.
    ///
    /// Replies are produced inside the read handler, so every request fully received before the
    /// close has its reply in the output that `close(afterFlushing:)` sends.
    func stop(completion: @escaping @Sendable () -> Void) {
        stopping.withLock { $0 = true }
        sweeper.stop()
        for listener in listeners { listener.close() }
        let closedAll = group.loops.enumerated().map { index, loop in
            Promise<Void, NoError>(on: .loop(loop)) { [self] resolver in
                let open = Array(clients[index].open.values)
                for client in open { client.close(afterFlushing: true) }
                when(fulfilled: open.map { $0.connection.closed }).always(on: .immediate) { _ in
                    resolver.fulfill(with: ())
                }
            }
        }
        let grace = group.loops[0].schedule(after: configuration.shutdownGrace) { [self] in
            logger.warning("shutdown grace period over, closing remaining clients")
            for (index, loop) in group.loops.enumerated() {
                loop.execute { [self] in
                    for client in clients[index].open.values { client.close(afterFlushing: false) }
                }
            }
        }
        when(fulfilled: closedAll).always(on: .immediate) { _ in
            grace.cancel()
            completion()
        }
    }
}

/// The clients of one loop. Touched only on that loop's thread.
private final class ClientRegistry {
    var open: [ObjectIdentifier: ClientConnection] = [:]
}
