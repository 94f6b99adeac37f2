import KeyValueCore
import KeyValueService
import Logging
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// loopkv's `KeyValueServer` on a simulated host named "server", and RESP clients on hosts of
/// their own, all on one ``SimulatedNetwork``.
///
/// By default every segment takes exactly ``latency`` and reads and writes are never split, so a
/// test can compute every instant: a request sent at `t` is handled at `t + latency`, its reply
/// arrives at `t + 2 * latency`.
final class SimulatedServerWorld: @unchecked Sendable {
    // `@unchecked Sendable`: touched only on the test's thread, which drives the network.

    /// The port the server listens on.
    static let port: UInt16 = 6379
    /// Every segment's delay (unless a test chose a latency distribution).
    static let latency = Duration.milliseconds(1)

    let network: SimulatedNetwork
    let serverHost: SimulatedHost
    let server: KeyValueServer
    /// loopkv's process around the server: its SIGTERM handling (``sendSIGTERM()``).
    let process: KeyValueProcess
    /// The server's log, stamped with virtual time.
    let log: LogRecorder
    /// The instants at which the server read bytes, with the count, per client address.
    private(set) var serverReads: [(time: Duration, remote: String, count: Int)] = []
    private var clientNumber = 0

    /// Starts a server configured by `configure` on a new network.
    ///
    /// - Parameters:
    ///   - seed: The network's seed (it matters only with `latency` ranges or `splitting`).
    ///   - latency: Each segment's delay; ``latency`` by default.
    ///   - window: The send window of each end.
    ///   - splitting: Whether reads and writes split at random points.
    init(
        seed: UInt64 = 1, latency: SimulatedLatency = .fixed(SimulatedServerWorld.latency), window: Int = 65_536,
        splitting: Bool = false, configure: (inout KeyValueServerConfiguration) -> Void = { _ in }
    ) throws {
        let network = SimulatedNetwork(seed: seed, latency: latency, window: window, splitsReadsAndWrites: splitting)
        self.network = network
        serverHost = network.addHost("server")
        var configuration = KeyValueServerConfiguration()
        configuration.host = "0.0.0.0"
        configuration.port = Self.port
        configure(&configuration)
        let log = LogRecorder(clock: { network.now })
        self.log = log
        server = KeyValueServer(
            configuration: configuration, group: serverHost.group,
            // The store reads the virtual clock: TTLs expire on it.
            clock: KeyValueClock(now: { network.now }),
            logger: Logger(label: "loopkv", factory: { _ in log.handler }))
        process = KeyValueProcess(server: server, logger: Logger(label: "loopkv", factory: { _ in log.handler }))
        network.receiveObserver = { [unowned self] host, remote, bytes in
            if host === serverHost { serverReads.append((network.now, remote, bytes.count)) }
        }
        guard case .value(let port)? = network.run(until: process.start(), timeLimit: .seconds(1)) else {
            throw WorldError.serverDidNotStart
        }
        try #require(port == Self.port)
    }

    enum WorldError: Error {
        case serverDidNotStart
        case notConnected(TCPError?)
    }

    /// A new client host, connected to the server (the connection is established, and the
    /// server has accepted it, once this returns).
    ///
    /// - Parameter reads: Whether the client takes what the server sends.
    func connect(reads: Bool = true) throws -> SimulatedRESPClient {
        let host = addClientHost()
        let attempt = Self.connect(from: host)
        guard case .value(let connection)? = network.run(until: attempt, timeLimit: .seconds(5)) else {
            throw WorldError.notConnected(attempt.result?.error)
        }
        // The server accepted one segment's time before: the client's "established" is its answer.
        return SimulatedRESPClient(connection: connection, host: host, network: network, reads: reads)
    }

    /// A new host for a client.
    func addClientHost() -> SimulatedHost {
        clientNumber += 1
        return network.addHost("client\(clientNumber)")
    }

    /// A connection attempt from `host` to the server.
    static func connect(from host: SimulatedHost) -> Promise<TCPConnection, TCPError> {
        TCPConnection.connect(host: "server", port: port, on: host.loop, timeout: .seconds(1))
    }

    /// Sends `arguments` and runs the network until its reply arrived; the reply, nil if none
    /// came within 10 s of virtual time.
    func call(_ client: SimulatedRESPClient, _ arguments: String...) -> String? {
        let before = client.replies.count
        client.send(command: arguments)
        guard run(until: { client.replies.count > before || client.isClosed }) else { return nil }
        return client.replies.count > before ? client.replies[before] : nil
    }

    /// Runs the network up to `instant` of virtual time (every event due by then), which must not
    /// have passed.
    func advance(to instant: Duration) {
        precondition(instant >= network.now, "advance(to: \(instant)) at \(network.now): that instant has passed")
        network.run(for: instant - network.now)
    }

    /// Steps the network until `condition` holds; false if it did not within `timeLimit` of
    /// virtual time.
    @discardableResult
    func run(until condition: () -> Bool, timeLimit: Duration = .seconds(10)) -> Bool {
        let deadline = network.now + timeLimit
        while !condition() {
            guard network.now <= deadline, network.step() else { return false }
        }
        return true
    }

    /// Bytes the server has read from `client`'s connection so far.
    func bytesRead(from client: SimulatedRESPClient) -> Int {
        let remote = "\(client.host.address):\(client.connection.localPort)"
        return serverReads.reduce(0) { $0 + ($1.remote == remote ? $1.count : 0) }
    }

    /// The server's `connected_clients`, asked over a new connection (which counts itself).
    func connectedClients() throws -> Int? {
        let asking = try connect()
        defer { asking.connection.close() }
        guard let info = call(asking, "INFO"), let range = info.range(of: "connected_clients:") else { return nil }
        return Int(info[range.upperBound...].prefix { $0.isNumber })
    }

    /// The label of the server's end of `client`'s connection in the trace ("#N server:6379").
    func serverEnd(of client: SimulatedRESPClient) -> String? {
        let clientEnd = " \(client.host.name):\(client.connection.localPort)"
        guard
            let established = network.trace.first(where: { $0.kind == .established && $0.detail.hasSuffix(clientEnd) }),
            let link = established.detail.split(separator: " ").first(where: { $0.hasPrefix("#") })
        else { return nil }
        return "\(link) server:\(Self.port)"
    }

    /// When the server accepted `client`'s connection (from the trace).
    func serverAccepted(_ client: SimulatedRESPClient) -> Duration? {
        guard let end = serverEnd(of: client) else { return nil }
        return network.trace.first { $0.kind == .accept && $0.detail == end }?.time
    }

    /// When the server closed its end of `client`'s connection (from the trace); nil while open.
    func serverClosed(_ client: SimulatedRESPClient) -> Duration? {
        guard let end = serverEnd(of: client) else { return nil }
        return network.trace.first { $0.kind == .close && $0.detail == end }?.time
    }

    /// Sends the server's process SIGTERM at the current instant, as a supervisor stopping the
    /// daemon does: loopkv's own handling (`KeyValueProcess`) stops the server, and closes the
    /// clients still open when the configured grace period (`shutdownGrace`) is over. It runs on
    /// the server's loop, within the run, so its state at a virtual instant is part of the run.
    ///
    /// - Returns: The process's exit: fulfilled once the server stopped, or its grace period is
    ///   over.
    @discardableResult
    func sendSIGTERM() -> Promise<Void, NoError> {
        network.signal(SIGTERM, to: serverHost, after: .zero)
        return process.exited
    }

    /// Ends the test: sends SIGTERM if the test did not, lets every client close, and checks
    /// that nothing is left: no event pending, every connection closed at both ends, the
    /// process exited.
    func finish(_ clients: [SimulatedRESPClient], stopped: Promise<Void, NoError>? = nil) {
        let stopped = stopped ?? sendSIGTERM()
        for client in clients where !client.isClosed { client.connection.close() }
        #expect(network.runUntilIdle(), "events still pending after the server stopped")
        // It resolves on the server's loop, within the run: idle means it has.
        #expect(stopped.result != nil, "the server's process did not exit")
        #expect(serverHost.listeningPorts.isEmpty, "the server still listens after it stopped")
        #expect(serverHost.unreleasedConnectionCount == 0, "the server still holds connections after it stopped")
        let opened = network.trace.count { $0.kind == .queued }
        let closedEnds = network.trace.count { $0.kind == .close }
        #expect(closedEnds == 2 * opened, "\(2 * opened - closedEnds) connection ends left open")
    }
}
