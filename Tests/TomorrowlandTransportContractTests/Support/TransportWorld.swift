import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop
@testable import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// The two transports under a `TCPConnection`; every contract case runs on both and must observe
/// the same thing.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Loopback sockets on this machine's kernel, under a libevent loop.
    case kernel
    /// Links of a `SimulatedNetwork` between two simulated hosts, on virtual time.
    case simulation

    var testDescription: String { rawValue }
}

/// A server side and a client side on one transport, driven by the test's thread, with the few
/// probes a case needs to know what the kernel (or the simulation standing in for it) holds.
///
/// On the kernel both sides share one `EventLoop` (clients name the server "127.0.0.1"); on the
/// simulation they are two hosts, "server" and "client", of a network seeded per case. Every
/// public call a case makes is the same on both: only this type knows which transport it is.
final class TransportWorld {
    let transport: Transport
    /// The loop the server's listeners and accepted connections run on.
    let serverLoop: EventLoop
    /// The loop the client's connections run on.
    let clientLoop: EventLoop
    /// The address a client connects to.
    let serverAddress: String
    private let network: SimulatedNetwork?
    /// The simulated server host (nil on the kernel).
    let serverHost: SimulatedHost?

    /// The most a case waits for anything, real or virtual: only a broken case reaches it.
    static let timeLimit: Duration = .seconds(30)

    init(_ transport: Transport, seed: UInt64 = 1) {
        self.transport = transport
        switch transport {
        case .kernel:
            let loop = EventLoop()
            serverLoop = loop
            clientLoop = loop
            serverAddress = "127.0.0.1"
            network = nil
            serverHost = nil
        case .simulation:
            let network = SimulatedNetwork(seed: seed)
            let server = network.addHost("server")
            let client = network.addHost("client")
            serverLoop = server.loop
            clientLoop = client.loop
            serverAddress = server.address
            self.network = network
            serverHost = server
        }
    }

    deinit {
        serverLoop.shutdown()
        if clientLoop !== serverLoop { clientLoop.shutdown() }
    }

    // MARK: Driving

    /// Runs the world until `promise` resolves (or ``timeLimit`` passes); its result, nil if it
    /// did not resolve.
    func run<Value, Failure>(until promise: Promise<Value, Failure>) -> PromiseResult<Value, Failure>? {
        if let network { return network.run(until: promise, timeLimit: Self.timeLimit) }
        let (done, resolver) = Promise<Void, NoError>.makeWithResolver()
        promise.tap(on: .immediate) { _ in resolver.fulfill(with: ()) }
        let watchdog = serverLoop.schedule(after: Self.timeLimit) { resolver.fulfill(with: ()) }
        _ = serverLoop.run(until: done)
        watchdog.cancel()
        return promise.result
    }

    /// Runs the world until `condition` holds (or ``timeLimit`` passes); whether it held.
    func run(until condition: () -> Bool) -> Bool {
        if let network {
            let limit = network.now + Self.timeLimit
            while !condition() {
                guard network.now < limit else { return false }
                // Nothing left to happen: time alone changes nothing more.
                guard network.step() else { return condition() }
            }
            return true
        }
        let deadline = ContinuousClock.now + Self.timeLimit
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            _ = serverLoop.run(until: serverLoop.sleep(for: .milliseconds(1)))
        }
        return true
    }

    /// Runs the world for a while with nothing to wait for: long enough for what is in flight
    /// to land (a loopback segment, a simulated one's latency), so that a case can check that
    /// something did not happen.
    func settle() {
        if let network {
            network.run(for: .seconds(1))
        } else {
            _ = serverLoop.run(until: serverLoop.sleep(for: .milliseconds(50)))
        }
    }

    // MARK: Setting up

    /// Listens on a port of the server's choosing (on "127.0.0.1" on the kernel, every address of
    /// the simulated server), handing accepted connections to `onAccept`.
    func listen(
        host: String? = nil, backlog: Int32 = 511, onAccept: @escaping (TCPConnection) -> Void = { _ in }
    ) throws -> TCPListener {
        var options = TCPListenerOptions()
        options.backlog = backlog
        let name = host ?? (transport == .kernel ? "127.0.0.1" : "")
        return try TCPListener.listen(host: name, port: 0, on: serverLoop, options: options, onAccept: onAccept)
    }

    /// A connection attempt from the client to `port` of the server (or of `host`).
    func connect(
        to port: UInt16, host: String? = nil, from loop: EventLoop? = nil, timeout: Duration = timeLimit
    ) -> Promise<TCPConnection, TCPError> {
        TCPConnection.connect(host: host ?? serverAddress, port: port, on: loop ?? clientLoop, timeout: timeout)
    }

    /// A connected pair: the client's end and the server's, both idle (neither reads).
    func connectedPair(options: TCPConnectionOptions = .init()) throws -> (client: TCPConnection, server: TCPConnection)
    {
        var accepted: TCPConnection?
        let listener = try listen { accepted = $0 }
        defer { listener.close() }
        guard let client = run(until: connect(to: listener.localPort))?.value, run(until: { accepted != nil }),
            let server = accepted
        else { throw ContractFailure("no connected pair") }
        return (client, server)
    }

    // MARK: What the kernel holds

    /// How many received bytes wait in the kernel (or the simulated end) for `connection` to
    /// read them: what the connection has not pulled into its own buffer.
    func unreadBytesInKernel(of connection: TCPConnection) -> Int {
        switch transport {
        case .kernel:
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            let count = recv(connection.fd, &buffer, buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
            return max(count, 0)
        case .simulation:
            return (connection.transport as! SimulatedLinkEnd).unreadCount
        }
    }

    /// Whether the kernel (or the simulated end) has taken in a reset for `connection`, whether
    /// or not the connection noticed.
    func kernelHasReset(_ connection: TCPConnection) -> Bool {
        switch transport {
        case .kernel:
            // `tcpi_state` is the first byte of `struct tcp_info`; 7 is TCP_CLOSE, where a
            // connected socket goes when a reset arrives.
            var info = [UInt8](repeating: 0, count: 256)
            var length = socklen_t(info.count)
            guard getsockopt(connection.fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return false }
            return info[0] == 7
        case .simulation:
            return (connection.transport as! SimulatedLinkEnd).isReset
        }
    }

    /// Aborts `connection`: the peer gets a reset. On the kernel, `SO_LINGER` with a zero timeout
    /// and a close; on the simulation, `SimulatedNetwork.reset(_:)`. Only the peer's side is
    /// part of the contract (the aborting end itself is closed by the call on the kernel and
    /// fails with `connectionReset` on the simulation).
    func abort(_ connection: TCPConnection) {
        switch transport {
        case .kernel:
            var option = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            connection.close()
        case .simulation:
            network!.reset(connection)
        }
    }

    /// Leaves the server no descriptor: on the kernel, this process's (run it in a child
    /// process); on the simulation, the server host's (its `descriptorLimit` set to what it holds).
    /// Runs `body`, then gives the descriptors back.
    func withServerOutOfDescriptors(_ body: () -> Void) {
        switch transport {
        case .kernel:
            let exhaustion = DescriptorExhaustion()
            body()
            exhaustion.release()
        case .simulation:
            serverHost!.descriptorLimit = serverHost!.descriptorsInUse
            body()
            serverHost!.descriptorLimit = nil
        }
    }
}

/// A case could not reach the state it observes from.
struct ContractFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A promise's state as a case records it: "pending", "value …", "error …".
func outcome<Value, Failure>(_ promise: Promise<Value, Failure>) -> String {
    switch promise.result {
    case nil: "pending"
    case .value(let value): "value \(value)"
    case .error(let error): "error \(error)"
    case .cancelled: "cancelled"
    }
}

/// What `closed` says: "pending", "orderly" (nil) or the error.
func closedOutcome(_ connection: TCPConnection) -> String {
    switch connection.closed.result {
    case nil: "pending"
    case .value(nil): "orderly"
    case .value(let error?): "\(error)"
    case .error, .cancelled: "impossible"
    }
}

/// Bytes as text, for observations that read well.
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
