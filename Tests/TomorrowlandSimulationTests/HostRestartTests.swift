import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct HostRestartTests {
    /// Echoes once, crashes the server, restarts it one second later (its daemon started again by
    /// `onHostRestart`), and echoes again.
    private static func crashAndRestart(seed: UInt64) throws -> (SimulatedNetwork, Observed) {
        let network = SimulatedNetwork(seed: seed)
        let server = network.addHost("server")
        let client = network.addHost("client")
        var observed = Observed()
        observed.firstLoop = server.loop
        _ = try startEchoServer(on: server)
        observed.before = network.run(until: echo([1, 2, 3], from: client))?.value
        // A connection open when the server crashes.
        let open = network.run(
            until: TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(1)))
        let read = open?.value?.read(exactly: 1)

        let crashedAt = network.now
        network.crash(server)
        let restartedGenerations = SimulatedBox<[Int]>([])
        network.onHostRestart = { host in
            restartedGenerations.value.append(host.generation)
            _ = try? startEchoServer(on: host)
        }
        network.schedule(at: crashedAt + .seconds(1), named: "restart server") { network.restart(server) }
        // While it is down, a connect goes unanswered.
        let whileDown = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .milliseconds(500))
        observed.whileDown = network.run(until: whileDown)?.error
        observed.readAtCrash = read.flatMap { network.run(until: $0)?.error }
        network.run(for: .seconds(1))
        observed.restartedGenerations = restartedGenerations.value
        observed.after = network.run(until: echo([4, 5], from: client))?.value
        network.runUntilIdle()
        return (network, observed)
    }

    struct Observed {
        var firstLoop: EventLoop?
        var before: [UInt8]?
        var readAtCrash: TCPError?
        var whileDown: TCPError?
        var restartedGenerations: [Int] = []
        var after: [UInt8]?
    }

    @Test func aCrashedHostRestartsAtAChosenInstantAndItsDaemonServesAgain() throws {
        let (network, observed) = try Self.crashAndRestart(seed: 31)
        let server = try #require(network.hosts.first)
        #expect(observed.before == [1, 2, 3])
        #expect(observed.readAtCrash == .connectionReset)
        #expect(observed.whileDown == .timedOut)
        #expect(observed.restartedGenerations == [1])
        #expect(observed.after == [4, 5])
        #expect(server.generation == 1)
        #expect(!server.isCrashed)
        #expect(server.loop !== observed.firstLoop)
        let restart = try #require(network.trace.first { $0.kind == .restart })
        let crash = try #require(network.trace.first { $0.kind == .fault && $0.detail == "crash server" })
        #expect(restart.detail == "server generation 1")
        #expect(restart.time == crash.time + .seconds(1))
        #expect(
            network.trace.contains { $0.kind == .action && $0.detail == "restart server" && $0.time == restart.time })
    }

    @Test func theLoopsOfTheCrashedGenerationStayShutDown() throws {
        let (network, observed) = try Self.crashAndRestart(seed: 32)
        let oldLoop = try #require(observed.firstLoop)
        #expect(!oldLoop.execute {})
        #expect(throws: TCPError.closed) { try TCPListener.listen(host: "", port: 8, on: oldLoop) { _ in } }
        let attempt = TCPConnection.connect(host: "server", port: 7, on: oldLoop, timeout: .seconds(1))
        #expect(network.run(until: attempt)?.error == .closed)
    }

    @Test func aRestartedHostWithNothingListeningRefuses() throws {
        let network = SimulatedNetwork(seed: 33)
        let server = network.addHost("server")
        let client = network.addHost("client")
        _ = try startEchoServer(on: server)
        network.crash(server)
        let group = network.restart(server)
        #expect(group.next() === server.loop)
        let attempt = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(1))
        #expect(network.run(until: attempt)?.error == .connectFailed(errno: ECONNREFUSED))
    }

    @Test func theSameSeedRestartsTheSameWay() throws {
        let first = try Self.crashAndRestart(seed: 34).0
        let second = try Self.crashAndRestart(seed: 34).0
        #expect(first.trace == second.trace)
        #expect(first.digest == second.digest)
    }
}
