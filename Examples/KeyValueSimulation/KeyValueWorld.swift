import Dispatch
import KeyValueCore
import KeyValueService
import Logging
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

/// One run of loopkv on a ``SimulatedNetwork``: a server host running `KeyValueServer`, client
/// hosts sending random commands, faults drawn from the seed, and every reply checked against a
/// ``KeyspaceModel``.
///
/// How the check is exact: a client writes one command, or a few pipelined in one write, and
/// writes again only once every reply came; the server handles a request in the very event in
/// which it reads its last byte (the network's `receiveObserver` reports that read), and a
/// connection's requests in order. The world applies each command to the model there, at the
/// virtual time the server's store reads, in the order the server handles requests; the reply the
/// model gives is the only one the client accepts (for DBSIZE, a range: see ``KeyspaceModel``).
/// A command whose connection is reset is applied if and only if the server read it, which is
/// exactly what the server did: the client, which cannot know, gives it up and goes on with its
/// next command on a new connection. QUIT goes alone, and the client reconnects after its +OK.
public final class KeyValueWorld: @unchecked Sendable {
    // `@unchecked Sendable`: touched only on the thread that drives the network.

    /// What a run is made of.
    public struct Configuration: Sendable {
        /// The seed of the network, the clients' commands and the faults.
        public var seed: UInt64
        /// Client hosts.
        public var clients: Int
        /// Commands each client sends at most.
        public var commands: Int
        /// When set, clients stop sending once this much virtual time has passed, and wait a
        /// seeded think time (``meanThinkTime`` on average) before each command.
        public var duration: Duration?
        /// The mean think time of paced clients (with a ``duration``) before each write: 750 ms
        /// by default, which, with 1.25 commands per write on average,
        /// makes about 1,000 commands per client in 10 virtual minutes.
        public var meanThinkTime: Duration
        /// Whether the seed draws faults: connection resets, partitions that heal.
        public var faults: Bool
        /// Mean virtual time between two faults.
        public var faultInterval: Duration
        /// How many of the network's last trace entries ``Outcome/trace`` keeps (the run keeps
        /// no more: a full trace of a large run is hundreds of megabytes).
        public var traceTail: Int

        /// A run of `clients` clients sending `commands` commands each, one right after the
        /// reply to the previous one.
        public init(
            seed: UInt64, clients: Int, commands: Int, faults: Bool = true, faultInterval: Duration = .milliseconds(40),
            traceTail: Int = 0
        ) {
            self.init(
                seed: seed, clients: clients, duration: nil, commands: commands, faults: faults,
                faultInterval: faultInterval, traceTail: traceTail)
        }

        /// A run of `clients` paced clients that send commands for `duration` of virtual time
        /// (if `duration` is not nil), each waiting a seeded think time before each command,
        /// and at most `commands` each.
        public init(
            seed: UInt64, clients: Int, duration: Duration?, commands: Int = .max,
            meanThinkTime: Duration = .milliseconds(750), faults: Bool = true,
            faultInterval: Duration = .milliseconds(40), traceTail: Int = 0
        ) {
            self.seed = seed
            self.clients = clients
            self.commands = commands
            self.duration = duration
            self.meanThinkTime = duration == nil ? .zero : meanThinkTime
            self.faults = faults
            self.faultInterval = faultInterval
            self.traceTail = traceTail
        }
    }

    /// How a run ended.
    public struct Outcome: Sendable {
        /// The network's digest, 16 hexadecimal digits.
        public var digest: String
        /// Commands sent.
        public var commands: Int
        /// Commands answered and checked.
        public var checked: Int
        /// Commands whose connection was lost before their reply.
        public var lost: Int
        /// Faults injected.
        public var faults: Int
        /// Events the network ran.
        public var events: Int
        /// Virtual time at the end.
        public var virtualTime: Duration
        /// Nil when every reply matched the model and nothing was left pending; else the first
        /// failure and the event at which it happened.
        public var failure: (event: Int, message: String)?
        /// The last ``Configuration/traceTail`` entries of the network's trace, one line each.
        public var trace: [String]
    }

    /// The port the server listens on.
    static let port: UInt16 = 6379
    /// The Unix time at the start of every run (2026-01-01T00:00:00Z), in milliseconds: EXAT and
    /// PXAT deadlines run on the virtual clock from there.
    static let unixMillisecondsAtZero: Int64 = 1_767_225_600_000

    /// The Unix time now, on the virtual clock, in milliseconds.
    var unixMilliseconds: Int64 {
        let (seconds, attoseconds) = network.now.components
        return Self.unixMillisecondsAtZero + seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    private let configuration: Configuration
    private let network: SimulatedNetwork
    private let serverHost: SimulatedHost
    private var clients: [SimulatedKeyValueClient] = []
    private var model = KeyspaceModel(unixMillisecondsAtZero: KeyValueWorld.unixMillisecondsAtZero)
    private var random: SimulationRandom
    /// The commands in flight on each connection ("address:port" as the server sees it), in the
    /// order sent, each with the count of bytes the server has read once it read all of it.
    private var inFlight: [String: [(client: SimulatedKeyValueClient, command: ModelCommand, end: Int)]] = [:]
    /// Bytes the server read from each connection.
    private var readCounts: [String: Int] = [:]
    private var finishedClients = 0
    private var sent = 0
    private var checked = 0
    private var lostCount = 0
    private var faultCount = 0
    private var events = 0
    private var failure: (event: Int, message: String)?
    /// Connections queued at the server, connection ends closed, and client ends of attempts
    /// given up after the server queued them, counted from the trace as it is recorded.
    private var opened = 0
    private var closed = 0
    private var abandoned = 0
    /// Whether the run is over (every client done, or a failure).
    private(set) var isFinished = false

    /// A world for `configuration`; ``run()`` it.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        network = SimulatedNetwork(seed: configuration.seed)
        serverHost = network.addHost("server")
        random = network.makeRandom()
        network.traceLimit = configuration.traceTail
    }

    /// Runs the world to its end and returns how it went.
    public func run() -> Outcome {
        let network = network
        let server = KeyValueServer(
            configuration: serverConfiguration, group: serverHost.group,
            // The store reads the virtual clock, so TTLs expire on it.
            clock: KeyValueClock(now: { network.now }, unixMillisecondsAtZero: Self.unixMillisecondsAtZero),
            logger: Logger(label: "loopkv-sim", factory: { _ in SwiftLogNoOpLogHandler() }))
        network.receiveObserver = { [unowned self] host, remote, bytes in
            if host === serverHost { serverRead(bytes.count, from: remote) }
        }
        network.traceObserver = { [unowned self] entry in
            switch entry.kind {
            case .queued: opened += 1
            case .close: closed += 1
            case .reset where entry.detail.contains("abandoned"): abandoned += 1
            default: break
            }
        }
        let started = server.start()
        guard case .value = network.run(until: started, timeLimit: .seconds(1)) else {
            return outcome(failing: "the server did not start")
        }
        for index in 0..<configuration.clients {
            let host = network.addHost("client\(index)")
            let client = SimulatedKeyValueClient(
                index: index, host: host, world: self, random: network.makeRandom(), commands: configuration.commands,
                deadline: configuration.duration, meanThinkTime: configuration.meanThinkTime)
            clients.append(client)
        }
        for client in clients { client.connect() }
        drive()
        isFinished = true
        if failure != nil { return outcome() }
        // Clean end: the server stops (listeners, clients, sweeper); then nothing may be pending.
        network.heal()
        let stopped = server.stop()
        guard network.runUntilIdle(maxEvents: 1_000_000) else {
            return outcome(failing: "events still pending after the server stopped")
        }
        // `stop()` gathers the closed clients with `when(fulfilled:)`, which resolves on a Dispatch
        // queue, outside the simulation: wait for it there (the network is idle, so this does
        // not change the run).
        let resolved = DispatchSemaphore(value: 0)
        stopped.always(on: .immediate) { _ in resolved.signal() }
        guard resolved.wait(timeout: .now() + 10) == .success else {
            return outcome(failing: "the server did not stop")
        }
        guard !network.step() else {
            return outcome(failing: "events pending after the server stopped")
        }
        // Every connection closed at both ends, but for the client ends of attempts given up
        // (a connect timed out while the server accepted), which never became connections.
        guard closed == 2 * opened - abandoned else {
            return outcome(failing: "\(2 * opened - abandoned - closed) connection ends left open")
        }
        return outcome()
    }

    private var serverConfiguration: KeyValueServerConfiguration {
        var configuration = KeyValueServerConfiguration()
        configuration.host = "0.0.0.0"
        configuration.port = Self.port
        return configuration
    }

    /// Steps the network until every client is done, injecting the seed's faults on the way.
    private func drive() {
        var nextFault = configuration.faults ? drawFaultDelay() : nil
        var healAt: Duration?
        let timeLimit = Duration.seconds(3600) + (configuration.duration ?? .zero)
        while failure == nil && finishedClients < clients.count {
            if let due = healAt, network.now >= due {
                network.heal()
                healAt = nil
            }
            if let due = nextFault, network.now >= due {
                injectFault(healAt: &healAt)
                nextFault = network.now + drawFaultDelay()
            }
            guard network.step() else {
                // Idle with clients not done: only a partition can hold them; otherwise stuck.
                if healAt != nil {
                    network.heal()
                    healAt = nil
                    continue
                }
                fail("the network went idle with \(clients.count - finishedClients) clients not done")
                break
            }
            events += 1
            if network.now > timeLimit {
                fail("over \(timeLimit) of virtual time")
            }
        }
    }

    private func drawFaultDelay() -> Duration {
        let (seconds, attoseconds) = configuration.faultInterval.components
        let meanMicroseconds = max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        return .microseconds(Int64.random(in: 1...(2 * meanMicroseconds), using: &random))
    }

    /// Resets a random client's connection (two times in three), or cuts a few clients off the
    /// server for a while.
    private func injectFault(healAt: inout Duration?) {
        if Int.random(in: 0..<3, using: &random) < 2 || healAt != nil {
            let open = clients.filter { $0.connection.map { !$0.isClosed } ?? false }
            guard !open.isEmpty, let connection = open[Int.random(in: 0..<open.count, using: &random)].connection
            else { return }
            network.reset(connection)
        } else {
            let count = Int.random(in: 1...max(1, min(3, clients.count)), using: &random)
            var cut: [SimulatedHost] = []
            for _ in 0..<count { cut.append(clients[Int.random(in: 0..<clients.count, using: &random)].host) }
            network.partition([serverHost], from: cut)
            healAt = network.now + .milliseconds(Int64.random(in: 5...400, using: &random))
        }
        faultCount += 1
    }

    // MARK: From the clients

    func sending(_ command: ModelCommand, length: Int, from client: SimulatedKeyValueClient, on connectionKey: String) {
        sent += 1
        let already = inFlight[connectionKey]?.last?.end ?? readCounts[connectionKey, default: 0]
        inFlight[connectionKey, default: []].append((client, command, already + length))
    }

    func replied() { checked += 1 }
    func lost(_ count: Int) { lostCount += count }
    func clientFinished() { finishedClients += 1 }

    func fail(_ message: String) {
        guard failure == nil else { return }
        failure = (events, message)
        isFinished = true
    }

    /// The server read `count` bytes from `remote`: each command in flight there whose last byte
    /// it has now read, it handles now, in order, so the model applies them now, in order.
    private func serverRead(_ count: Int, from remote: String) {
        let total = readCounts[remote, default: 0] + count
        readCounts[remote] = total
        guard var flights = inFlight[remote], !flights.isEmpty else {
            fail("the server read \(count) bytes from \(remote) with no command in flight")
            return
        }
        if flights[0].command == .malformed {
            // The server stops reading at the byte in error and answers (the client knew the
            // reply when it sent it); nothing reaches the model, whatever it read.
            if total >= flights[0].end { inFlight[remote] = nil }
            return
        }
        guard total <= flights[flights.count - 1].end else {
            fail("the server read past the commands in flight from \(remote)")
            return
        }
        let now = network.now.components
        let milliseconds = now.seconds * 1000 + now.attoseconds / 1_000_000_000_000_000
        while let flight = flights.first, total >= flight.end {
            flights.removeFirst()
            let reply = model.apply(flight.command, now: milliseconds)
            flight.client.serverRead(on: remote, expecting: reply)
        }
        inFlight[remote] = flights.isEmpty ? nil : flights
    }

    private func outcome(failing message: String? = nil) -> Outcome {
        if let message { fail(message) }
        return Outcome(
            digest: network.digestHex, commands: sent, checked: checked, lost: lostCount, faults: faultCount,
            events: events, virtualTime: network.now, failure: failure,
            trace: network.trace.map(\.description))
    }
}
