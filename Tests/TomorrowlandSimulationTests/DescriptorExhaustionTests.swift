import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DescriptorExhaustionTests {
    struct Observed {
        var connected = false
        var echoedAt: Duration?
        var echoed: [UInt8]?
        var failedAccepts: [Duration] = []
        var acceptedAt: Duration?
    }

    /// A server whose only descriptor is its listening socket until one second in, when the limit
    /// is lifted; a client connects at once and echoes.
    private static func exhaustion(seed: UInt64) throws -> (SimulatedNetwork, Observed) {
        let network = SimulatedNetwork(seed: seed)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        server.descriptorLimit = 1
        network.schedule(after: .seconds(1), named: "raise the descriptor limit") { server.descriptorLimit = nil }
        var observed = Observed()
        let reply = echo(pattern(100), from: client)
        observed.echoed = network.run(until: reply)?.value
        observed.echoedAt = network.now
        observed.failedAccepts = network.trace.filter { $0.kind == .acceptFailed }.map(\.time)
        observed.acceptedAt = network.trace.first { $0.kind == .accept }?.time
        observed.connected = network.trace.contains { $0.kind == .established }
        listener.close()
        network.runUntilIdle()
        return (network, observed)
    }

    @Test func acceptFailsWithEMFILEAndTheListenerBacksOffThenAcceptsOnceDescriptorsAreBack() throws {
        let (network, observed) = try Self.exhaustion(seed: 51)
        // The client's connect completes (the kernel queued it); the server cannot accept it.
        #expect(observed.connected)
        #expect(observed.echoed == pattern(100))
        let failures = observed.failedAccepts
        // One failed accept per back-off period (100 ms) while the limit holds: no spinning.
        #expect(failures.count == 10)
        for (earlier, later) in zip(failures, failures.dropFirst()) {
            #expect(later - earlier >= TCPListener.resourceBackoff)
            #expect(later - earlier < TCPListener.resourceBackoff + .milliseconds(1))
        }
        let accepted = try #require(observed.acceptedAt)
        #expect(accepted > .seconds(1) && accepted < .seconds(1) + TCPListener.resourceBackoff)
        #expect(try #require(observed.echoedAt) > accepted)
        #expect(network.trace.contains { $0.kind == .acceptFailed && $0.detail == "server:7 EMFILE" })
    }

    @Test func aListenerCannotBindWithoutADescriptor() throws {
        let network = SimulatedNetwork(seed: 52)
        let server = network.addHost("server")
        let listener = try startEchoServer(on: server)
        server.descriptorLimit = 1
        #expect(throws: TCPError.bindFailed(errno: EMFILE)) { try startEchoServer(on: server, port: 8) }
        listener.close()
    }

    @Test func closingAConnectionFreesADescriptorForTheNextAccept() throws {
        let network = SimulatedNetwork(seed: 53)
        let server = network.addHost("server")
        let clients = (0..<2).map { network.addHost("client\($0)") }
        let listener = try startEchoServer(on: server)
        // The listening socket and one connection.
        server.descriptorLimit = 2
        let first = TCPConnection.connect(host: "server", port: 7, on: clients[0].loop, timeout: .seconds(5))
        let firstConnection = try #require(network.run(until: first)?.value)
        let second = echo(pattern(10), from: clients[1])
        network.run(for: .milliseconds(500))
        #expect(second.result == nil)
        #expect(network.trace.contains { $0.kind == .acceptFailed })
        // The first client leaves; the server closes its end at the end of input, and the next
        // accept after the back-off succeeds.
        firstConnection.close()
        #expect(network.run(until: second, timeLimit: .seconds(1))?.value == pattern(10))
        listener.close()
        network.runUntilIdle()
    }

    @Test func connectionsLeftInTheBacklogOfAClosedListenerHoldNoDescriptor() throws {
        let network = SimulatedNetwork(seed: 55)
        let server = network.addHost("server")
        let client = network.addHost("client")
        // Two descriptors: a listening socket and one connection.
        server.descriptorLimit = 2
        let paused = try startEchoServer(on: server)
        paused.pauseAccepting()
        let waiting = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
        let waitingRead = try #require(network.run(until: waiting)?.value).read(maxBytes: 1)
        // Closing the listener resets the connection it never accepted: the kernel frees it.
        paused.close()
        #expect(network.run(until: waitingRead)?.error == .connectionReset)
        let listener = try startEchoServer(on: server, port: 8)
        let reply = TCPConnection.connect(host: "server", port: 8, on: client.loop, timeout: .seconds(5))
            .flatMap(on: .loop(client.loop)) { connection in
                connection.write([9]).flatMap(on: .loop(client.loop)) { connection.read(exactly: 1) }
            }
        #expect(network.run(until: reply)?.value == [9])
        #expect(!network.trace.contains { $0.kind == .acceptFailed })
        listener.close()
    }

    @Test func theSameSeedExhaustsTheSameWay() throws {
        let first = try Self.exhaustion(seed: 54).0
        let second = try Self.exhaustion(seed: 54).0
        #expect(first.digest == second.digest)
    }
}
