import KeyValueCore
import Logging
import Synchronization
import Tomorrowland
import TomorrowlandLoop

/// The `loopkv` server: one listener per loop of an `EventLoopGroup` (SO_REUSEPORT when there
/// are several, so the kernel spreads connections), connections served on the loop that accepted
/// them, and one ``ShardedStore`` that every loop shares (see its documentation for why).
///
/// What each loop owns (its listener, its clients) lives in a `LoopBound` box for that loop, so
/// only that loop's thread touches it (checked); the client count, shared by all loops, is an
/// atomic. The class itself is then `Sendable` without an unchecked promise.
public final class KeyValueServer: Sendable {
    /// What the server was configured with.
    public let configuration: KeyValueServerConfiguration
    /// The loops the server runs on: the daemon's own, or a simulated host's.
    public let group: EventLoopGroup
    /// The key space every loop shares.
    public let store: ShardedStore
    private let logger: Logger
    private let sweeper: ExpirySweeper
    private let loopStates: [LoopBound<LoopState>]
    private let clientCount = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)

    /// A server on `group`'s loops whose store reads time from `clock`; call ``start()``.
    ///
    /// The daemon passes `EventLoopGroup(loopCount:)` and ``KeyValueClock/monotonic``; a
    /// simulation passes a simulated host's group and a clock reading the simulation's virtual
    /// time, so that TTLs expire on it. `configuration.loopCount` is ignored: the group decides.
    public init(
        configuration: KeyValueServerConfiguration, group: EventLoopGroup, clock: KeyValueClock, logger: Logger
    ) {
        self.configuration = configuration
        self.logger = logger
        self.group = group
        store = ShardedStore(shardCount: group.loops.count == 1 ? 1 : 64, clock: clock)
        sweeper = ExpirySweeper(store: store, executor: group.loops[0])
        loopStates = group.loops.map { LoopBound(LoopState(), on: $0) }
    }

    /// Binds one listener per loop, one loop after the other (the first one learns the port when
    /// the configuration says 0), and starts the expiry sweep.
    ///
    /// - Returns: A promise of the port the listeners are bound to, rejected with the first
    ///   listener's error (the listeners already bound stay until the group shuts down).
    public func start() -> Promise<UInt16, any Error> {
        var options = TCPListenerOptions()
        options.reusePort = group.loops.count > 1
        // The parser refuses oversized requests with a reply; the connection's own bound is a
        // backstop above it (a full request plus a read's worth of pipelined ones).
        options.connection.maxInputBytes = configuration.maxRequestBytes + 1 << 20
        var bound = Promise<UInt16, any Error>(fulfilled: configuration.port)
        for index in group.loops.indices {
            bound = bound.flatMap(on: .immediate) { [self, options] port in
                listen(loopIndex: index, port: port, options: options)
            }
        }
        return bound.tap(on: .immediate) { [sweeper] result in
            if case .value = result { sweeper.start() }
        }
    }

    /// Binds loop `loopIndex`'s listener, on that loop (where `listen` must be called).
    private func listen(loopIndex: Int, port: UInt16, options: TCPListenerOptions) -> Promise<UInt16, any Error> {
        let loop = group.loops[loopIndex]
        let state = loopStates[loopIndex]
        let host = configuration.host
        return loop.submit { [self] () throws -> UInt16 in
            let listener = try TCPListener.listen(host: host, port: port, on: loop, options: options) {
                [self] connection in
                accept(connection, loopIndex: loopIndex)
            }
            state.value.listener = listener
            return listener.localPort
        }
    }

    /// Serves `connection` on loop `loopIndex` (its thread), unless the server is full.
    private func accept(_ connection: TCPConnection, loopIndex: Int) {
        guard admitClient() else {
            // As Redis: tell the client why, then close.
            logger.warning("max clients reached, refusing", metadata: ["peer": "\(connection.remoteDescription)"])
            connection.enqueue(Array("-ERR max number of clients reached\r\n".utf8))
            connection.close(afterFlushing: true)
            return
        }
        let client = ClientConnection(
            connection: connection, processor: CommandProcessor(store: store, infoProvider: infoText),
            maxRequestBytes: configuration.maxRequestBytes, idleTimeout: configuration.idleTimeout, logger: logger)
        let state = loopStates[loopIndex]
        let id = state.value.nextClientID
        state.value.nextClientID += 1
        state.value.clients[id] = client
        logger.debug("client connected", metadata: ["peer": "\(connection.remoteDescription)"])
        client.start { [self] in
            state.value.clients[id] = nil
            clientCount.wrappingSubtract(1, ordering: .relaxed)
        }
        if stopping.load(ordering: .acquiring) { client.close(afterFlushing: true) }
    }

    /// Counts one more client, unless that would pass the maximum.
    private func admitClient() -> Bool {
        var count = clientCount.load(ordering: .relaxed)
        while count < configuration.maxClients {
            let (exchanged, current) = clientCount.compareExchange(
                expected: count, desired: count + 1, ordering: .relaxed)
            if exchanged { return true }
            count = current
        }
        return false
    }

    private func infoText() -> String {
        var text =
            "loops:\(group.loops.count)\r\n\r\n# Clients\r\nconnected_clients:\(clientCount.load(ordering: .relaxed))\r\n"
        text += "\r\n# Loops\r\n"
        // The off path: one relaxed load; the registry is read only while the report is on.
        if PendingPromiseTracking.isOn {
            text += Self.pendingPromisesInfo(PendingPromiseTracking.summary())
        }
        for (index, loop) in group.loops.enumerated() {
            text += Self.loopInfoLine(index: index, totals: loop.tickTotals)
        }
        return text
    }

    /// One loop's line of INFO's `# Loops` section, in the form of Redis's `db0:keys=…` lines:
    /// `loop0:ticks=…,items=…,busy_ms=…,waiting_ms=…,stalls=…`, from the loop's tick totals
    /// (zero while tick statistics are off: the daemon turns them on; a simulated host's loop
    /// measures nothing).
    static func loopInfoLine(index: Int, totals: LoopTickTotals) -> String {
        "loop\(index):ticks=\(totals.tickCount),items=\(totals.itemCount),"
            + "busy_ms=\(milliseconds(totals.busyTime)),waiting_ms=\(milliseconds(totals.waitingTime)),"
            + "stalls=\(totals.stallCount)\r\n"
    }

    /// The `# Loops` section's pending-promise lines, while the pending-promise report is on
    /// (`TOMORROWLAND_PENDING_PROMISES`): `pending_promises:` the recorded root promises still
    /// pending, process wide (with sampling, about one in N of them), and
    /// `oldest_pending_promise_ms:` the age of the oldest of them (0.000 when none is).
    static func pendingPromisesInfo(_ summary: PendingPromiseSummary) -> String {
        "pending_promises:\(summary.count)\r\n"
            + "oldest_pending_promise_ms:\(milliseconds(summary.oldestAge ?? .zero))\r\n"
    }

    /// `duration` in milliseconds with three decimals (`12.345`).
    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// Stops accepting, lets every client take the replies already produced, and closes them: the
    /// graceful shutdown that ``KeyValueProcess`` starts on SIGTERM.
    ///
    /// Replies are produced inside the read handler, so every request fully received before the
    /// close has its reply in the output that `close(afterFlushing:)` sends.
    ///
    /// - Returns: A promise fulfilled once every client is closed. Requesting its cancellation
    ///   (``KeyValueProcess`` does when its grace period is over) closes the clients still open without
    ///   waiting for their output, and cancels it.
    public func stop() -> Promise<Void, NoError> {
        stopping.store(true, ordering: .releasing)
        sweeper.stop()
        // Each loop closes its listener and its clients, and its promise is fulfilled once they
        // are closed, or cancelled when the loop shut down before it could run that.
        let closings = zip(group.loops, loopStates).map { loop, state in
            loop.submit {
                state.value.listener?.close()
                state.value.listener = nil
                // In the order they connected: a closing order that does not depend on hashing
                // (a simulated run gives the same trace in every process).
                let open = state.value.clients.sorted { $0.key < $1.key }.map(\.value)
                for client in open { client.close(afterFlushing: true) }
                return open.map(\.connection.closed).reduce(Promise<Void, NoError>(fulfilled: ())) { previous, closed in
                    previous.flatMap(on: .immediate) { closed.map(on: .immediate) { _ in () } }
                }
            }
            .flatMap(on: .immediate) { $0 }
            .mapResult(on: .immediate) { _ in PromiseResult<Void, NoError>.value(()) }
        }
        // Then every loop in turn. Resolved where the last close is (a loop), never on a Dispatch
        // queue: a simulated run stays on its one thread and in its order.
        let closedAll = closings.reduce(Promise<Void, NoError>(fulfilled: ())) { previous, closing in
            previous.flatMap(on: .immediate) { closing }
        }
        let (stopped, resolver) = Promise<Void, NoError>.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { [self] resolver in
            logger.warning("shutdown grace period over, closing remaining clients")
            for (loop, state) in zip(group.loops, loopStates) {
                // A promise, though nobody waits for it: it is what makes work aimed at a loop
                // that has shut down meanwhile a no-op (the loops shut down right after this).
                let _: Promise<Void, NoError> = loop.submit {
                    for (_, client) in state.value.clients.sorted(by: { $0.key < $1.key }) {
                        client.close(afterFlushing: false)
                    }
                }
            }
            resolver.cancel()
        }
        closedAll.tap(on: .immediate) { _ in resolver.fulfill(with: ()) }
        return stopped
    }
}

/// What one loop of the server owns: its listener and its clients. Touched only on that loop's
/// thread, through the server's `LoopBound` box for the loop.
private final class LoopState {
    var listener: TCPListener?
    /// The loop's clients, by the order in which they connected.
    var clients: [UInt64: ClientConnection] = [:]
    /// The number the next client is filed under.
    var nextClientID: UInt64 = 0
}
