import KeyValueCore
import KeyValueService
import Logging
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

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
        /// Whether the seed draws faults: every kind of ``faultPlan``, and graceful restarts of
        /// the server.
        public var faults: Bool
        /// Mean virtual time between two connection resets; the other kinds of fault are rarer,
        /// in proportion (see ``faultPlan``).
        public var faultInterval: Duration
        /// Mean virtual time between two crashes of the server, and from the start of a server
        /// process to its graceful restart (SIGTERM, then a new process): 1 s for back-to-back
        /// clients, 30 s for paced ones. Either one loses the key space.
        public var restartInterval: Duration
        /// How many of the network's last trace entries ``Outcome/trace`` keeps (the run keeps
        /// no more: a full trace of a large run is hundreds of megabytes).
        public var traceTail: Int

        /// A run of `clients` clients sending `commands` commands each, one right after the
        /// reply to the previous one.
        public init(
            seed: UInt64, clients: Int, commands: Int, faults: Bool = true, faultInterval: Duration = .milliseconds(40),
            restartInterval: Duration = .seconds(1), traceTail: Int = 0
        ) {
            self.init(
                seed: seed, clients: clients, duration: nil, commands: commands, faults: faults,
                faultInterval: faultInterval, restartInterval: restartInterval, traceTail: traceTail)
        }

        /// A run of `clients` paced clients that send commands for `duration` of virtual time
        /// (if `duration` is not nil), each waiting a seeded think time before each command,
        /// and at most `commands` each.
        public init(
            seed: UInt64, clients: Int, duration: Duration?, commands: Int = .max,
            meanThinkTime: Duration = .milliseconds(750), faults: Bool = true,
            faultInterval: Duration = .milliseconds(40), restartInterval: Duration = .seconds(30), traceTail: Int = 0
        ) {
            self.seed = seed
            self.clients = clients
            self.commands = commands
            self.duration = duration
            self.meanThinkTime = duration == nil ? .zero : meanThinkTime
            self.faults = faults
            self.faultInterval = faultInterval
            self.restartInterval = restartInterval
            self.traceTail = traceTail
        }

        /// What the network injects by itself when ``faults`` is on, every draw from the seed:
        /// connection resets every ``faultInterval`` on average; a partition every 3, a spell of
        /// descriptor exhaustion on the server and a host refusing or ignoring connects every 25;
        /// crashes of the server every ``restartInterval`` (restarted 10 to 200 ms later); one
        /// name resolution in 50 late, never answered or answered with a dead address.
        public var faultPlan: SimulatedFaultPlan {
            guard faults else { return .none }
            var plan = SimulatedFaultPlan()
            plan.resetInterval = faultInterval
            plan.partitionInterval = faultInterval * 3
            plan.descriptorExhaustionInterval = faultInterval * 25
            plan.unreachableInterval = faultInterval * 25
            plan.crashInterval = restartInterval
            plan.crashableHosts = [KeyValueWorld.serverName]
            plan.restartDelay = .milliseconds(10) ... .milliseconds(200)
            plan.nameFaultProbability = 0.02
            plan.lateNameDelay = .milliseconds(10) ... .milliseconds(300)
            return plan
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
        /// Faults injected: the network's (``SimulatedNetwork/faultCount``) and graceful restarts.
        public var faults: Int
        /// Times the server lost its key space: crashes and graceful restarts.
        public var serverRestarts: Int
        /// Events the network ran.
        public var events: Int
        /// Virtual time at the end.
        public var virtualTime: Duration
        /// Nil when every reply matched the model and nothing was left pending; else the first
        /// failure and the event at which it happened.
        public var failure: (event: Int, message: String)?
        /// The last ``Configuration/traceTail`` entries of the network's trace, one line each.
        public var trace: [String]
        /// Every fault of the run, what ended it, and every scheduled action (a graceful restart's
        /// steps), one trace line each, in order: what the faults were, however long the run.
        public var faultLog: [String]
    }

    /// The port the server listens on.
    static let port: UInt16 = 6379
    /// The server host's name.
    static let serverName = "server"
    /// How long a graceful restart lets clients take their last replies before the process exits
    /// anyway (as the daemon's shutdown grace period).
    static let gracePeriod = Duration.milliseconds(500)
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
    /// The running server process (loopkv's own, with its signal handling); nil while the host
    /// is down (crashed, or between a graceful stop's exit and the restart).
    private var process: KeyValueProcess?
    /// Every server process started, to check at the end that none outlived its run (what a
    /// crash kills is gone, and a clean stop leaves nothing holding the server).
    private var startedServers: [WeakServer] = []
    /// Whether a graceful restart is under way (the server stopping, then exiting).
    private var isRestartingGracefully = false
    /// Whether graceful restarts are still drawn (until the clients are done).
    private var drawsGracefulRestarts = false
    /// The running process's SIGTERM, drawn when it started: called off if the process is gone
    /// first (crashed), so that no signal goes to a process that is not there.
    private var pendingSIGTERM: SimulatedScheduledActionHandle?
    /// The stopping process's exit, once it may exit: called off when it crashes meanwhile, so
    /// that the trace names only what happened.
    private var pendingExit: SimulatedScheduledActionHandle?
    /// Whether the run is ending: the last SIGTERM's exit leaves the host as it is, for the
    /// checks of a clean stop.
    private var isFinishing = false
    private var gracefulRestartCount = 0
    private var serverRestartCount = 0
    /// Virtual time of the last reply, lost command or client done: a run that goes long without
    /// any is stuck.
    private var lastProgress = Duration.zero
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
    private var events = 0
    private var faultLog: [String] = []
    private var failure: (event: Int, message: String)?
    /// Whether the run is over (every client done, or a failure).
    private(set) var isFinished = false

    /// A world for `configuration`; ``run()`` it.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        network = SimulatedNetwork(seed: configuration.seed)
        serverHost = network.addHost(Self.serverName)
        random = network.makeRandom()
        network.traceLimit = configuration.traceTail
    }

    /// Runs the world to its end and returns how it went.
    public func run() -> Outcome {
        network.receiveObserver = { [unowned self] host, remote, bytes in
            if host === serverHost { serverRead(bytes.count, from: remote) }
        }
        network.traceObserver = { [unowned self] entry in
            switch entry.kind {
            case .fault, .restart, .action, .acceptFailed: faultLog.append(entry.description)
            default: break
            }
        }
        network.onHostCrash = { [unowned self] host in
            if host === serverHost { serverLostItsMemory() }
        }
        network.onHostRestart = { [unowned self] host in
            if host === serverHost { startServer() }
        }
        guard let started = startServer(),
            case .value = network.run(until: started, timeLimit: .seconds(1))
        else {
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
        network.faultPlan = configuration.faultPlan
        if configuration.faults {
            drawsGracefulRestarts = true
            scheduleGracefulRestart()
        }
        drive()
        isFinished = true
        if failure != nil { return outcome() }
        return finish()
    }

    /// The clean end, once every client is done: no more faults (those under way end: partitions
    /// heal, a crashed server restarts), then the server stops gracefully; then nothing may be
    /// left: no event (no timer, no segment), no listener, no connection, no server process.
    private func finish() -> Outcome {
        network.faultPlan = .none
        drawsGracefulRestarts = false
        pendingSIGTERM?.cancel()
        pendingSIGTERM = nil
        // Longer than any fault under way lasts (the server's timers keep the network busy, so
        // "until idle" would not end while it runs).
        network.run(for: .seconds(1))
        network.heal()
        // Only its exit is kept here: the check below that no process outlives the run must not
        // find this one held by this function.
        guard !isRestartingGracefully, let exited = process?.exited else {
            return outcome(failing: "the server was not running once the faults ended")
        }
        // The daemon's own SIGTERM path, as a supervisor stops it.
        isFinishing = true
        network.signal(SIGTERM, to: serverHost, after: .zero)
        guard network.runUntilIdle(maxEvents: 1_000_000) else {
            return outcome(failing: "events still pending after the server stopped")
        }
        // The stop resolves on the server's loop, within the run: idle means it has.
        guard case .value? = exited.result else {
            return outcome(
                failing:
                    "the server did not stop on SIGTERM (its exit is \(exited.result.map { "\($0)" } ?? "pending"))")
        }
        guard serverHost.listeningPorts.isEmpty else {
            return outcome(failing: "the server still listens on \(serverHost.listeningPorts) after it stopped")
        }
        // Every connection closed at both ends (and none waiting in a backlog).
        for host in [serverHost] + clients.map(\.host) where host.unreleasedConnectionCount > 0 {
            return outcome(failing: "\(host.name) still holds \(host.unreleasedConnectionCount) connections")
        }
        // Nothing holds a server any more, the last one's included: no promise, callback or timer
        // of it is left on a loop, and a crash left nothing of the process it killed.
        self.process = nil
        if let survivor = startedServers.firstIndex(where: { $0.server != nil }) {
            return outcome(
                failing: "server process \(survivor + 1) of \(startedServers.count) is still alive after the run")
        }
        return outcome()
    }

    /// Starts a server process on the server host's current loops; returns its start promise,
    /// nil when the host is down.
    @discardableResult
    private func startServer() -> Promise<UInt16, any Error>? {
        guard !serverHost.isCrashed else { return nil }
        let network = network
        let logger = Logger(label: "loopkv-sim", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = KeyValueServer(
            configuration: serverConfiguration, group: serverHost.group,
            // The store reads the virtual clock, so TTLs expire on it.
            clock: KeyValueClock(now: { network.now }, unixMillisecondsAtZero: Self.unixMillisecondsAtZero),
            logger: logger)
        let process = KeyValueProcess(server: server, logger: logger)
        self.process = process
        startedServers.append(WeakServer(server: server))
        watchForExit(of: process)
        if drawsGracefulRestarts { scheduleGracefulRestart() }
        let started = process.start()
        started.always(on: .immediate) { [unowned self] result in
            if case .value = result { return }
            fail("server process \(startedServers.count) did not start: \(result)")
        }
        return started
    }

    /// The server process is gone (a crash, or the exit after a graceful stop), and the key
    /// space with it: the model starts over, and nothing is in flight to it any more (its
    /// connections were reset; the clients give up what they had sent on them).
    private func serverLostItsMemory() {
        process = nil
        isRestartingGracefully = false
        pendingSIGTERM?.cancel()
        pendingSIGTERM = nil
        pendingExit?.cancel()
        pendingExit = nil
        serverRestartCount += 1
        model = KeyspaceModel(unixMillisecondsAtZero: Self.unixMillisecondsAtZero)
        inFlight.removeAll()
        readCounts.removeAll()
    }

    /// Sends the running server process its SIGTERM at a seeded instant (the next process draws
    /// its own when it starts): loopkv's own signal handling then stops it gracefully.
    private func scheduleGracefulRestart() {
        pendingSIGTERM = network.signal(SIGTERM, to: serverHost, after: drawDelay(mean: configuration.restartInterval))
    }

    /// Follows a server process through its graceful shutdown: the signal it heard, then its
    /// exit (once it stopped, or its grace period is over), which loses the key space as a crash
    /// does; it starts again 10 to 200 ms later. A crash before then ends the process first.
    private func watchForExit(of process: KeyValueProcess) {
        let generation = serverHost.generation
        process.shutdownRequested.tap(on: .immediate) { [unowned self] result in
            guard case .value = result, serverHost.generation == generation, !serverHost.isCrashed else { return }
            pendingSIGTERM = nil
            isRestartingGracefully = true
            if !isFinishing { gracefulRestartCount += 1 }
        }
        process.exited.tap(on: .immediate) { [unowned self] _ in
            guard serverHost.generation == generation, !serverHost.isCrashed, !isFinishing else { return }
            // As an event of the network, outside the loops: a crash may not run inside loop work.
            pendingExit = network.schedule(after: .zero, named: "server exits") { [unowned self] in
                pendingExit = nil
                network.crash(serverHost)
                let downtime = Duration.microseconds(Int64.random(in: 10_000...200_000, using: &random))
                network.schedule(after: downtime, named: "server starts again") { [unowned self] in
                    guard serverHost.generation == generation, serverHost.isCrashed else { return }
                    network.restart(serverHost)
                }
            }
        }
    }

    private var serverConfiguration: KeyValueServerConfiguration {
        var configuration = KeyValueServerConfiguration()
        configuration.host = "0.0.0.0"
        configuration.port = Self.port
        configuration.shutdownGrace = Self.gracePeriod
        return configuration
    }

    /// Steps the network until every client is done; the fault plan injects faults on the way.
    private func drive() {
        let timeLimit = Duration.seconds(3600) + (configuration.duration ?? .zero)
        // Longer than any fault lasts (a partition, a restart, a connect timing out) and any think
        // time: this long without a reply or a lost command, the run is stuck.
        let stuckAfter = Duration.seconds(60) + configuration.meanThinkTime * 4
        while failure == nil && finishedClients < clients.count {
            guard network.step() else {
                fail("the network went idle with \(clients.count - finishedClients) clients not done")
                break
            }
            events += 1
            if network.now > timeLimit {
                fail("over \(timeLimit) of virtual time")
            } else if network.now - lastProgress > stuckAfter {
                fail("no reply, no lost command and no client done for \(network.now - lastProgress); \(waitingFor)")
            }
        }
    }

    /// What a run that stopped making progress waits for: the server's state, and each client not
    /// done (its replies outstanding, or what it is doing).
    private var waitingFor: String {
        let serverState: String
        if process == nil {
            serverState = "down"
        } else if isRestartingGracefully {
            serverState = "stopping (SIGTERM)"
        } else {
            serverState = "up (generation \(serverHost.generation))"
        }
        let waiting = clients.filter { !$0.isDone }
        let shown = waiting.prefix(10).map(\.waitingFor).joined(separator: " | ")
        let more = waiting.count > 10 ? " | and \(waiting.count - 10) more" : ""
        return "server \(serverState); clients not done: \(waiting.count): \(shown)\(more)"
    }

    /// A delay drawn uniformly between 1 µs and twice `mean`.
    private func drawDelay(mean: Duration) -> Duration {
        let (seconds, attoseconds) = mean.components
        let meanMicroseconds = max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        return .microseconds(Int64.random(in: 1...(2 * meanMicroseconds), using: &random))
    }

    // MARK: From the clients

    func sending(_ command: ModelCommand, length: Int, from client: SimulatedKeyValueClient, on connectionKey: String) {
        sent += 1
        let already = inFlight[connectionKey]?.last?.end ?? readCounts[connectionKey, default: 0]
        inFlight[connectionKey, default: []].append((client, command, already + length))
    }

    func replied() {
        checked += 1
        lastProgress = network.now
    }

    func lost(_ count: Int) {
        lostCount += count
        lastProgress = network.now
    }
    func clientFinished() {
        finishedClients += 1
        lastProgress = network.now
    }

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
            digest: network.digestHex, commands: sent, checked: checked, lost: lostCount,
            faults: network.faultCount + gracefulRestartCount, serverRestarts: serverRestartCount, events: events,
            virtualTime: network.now, failure: failure,
            trace: network.trace.map(\.description), faultLog: faultLog)
    }
}

/// A server process the world started, held weakly: once it is gone (crashed, or stopped and let
/// go), nothing may keep it alive.
private struct WeakServer {
    weak var server: KeyValueServer?
}
