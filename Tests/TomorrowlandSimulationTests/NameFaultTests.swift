import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct NameFaultTests {
    /// A network with an echo server, a client, and `fault` on the name "server".
    private static func world(seed: UInt64, fault: SimulatedNameFault) throws -> (SimulatedNetwork, SimulatedHost) {
        let network = SimulatedNetwork(seed: seed)
        let server = network.addHost("server")
        let client = network.addHost("client")
        _ = try startEchoServer(on: server)
        network.nameFaults["server"] = fault
        return (network, client)
    }

    @Test func aLateNameOutlastsAShortTimeoutAndConnectsWithinALongOne() throws {
        let (network, client) = try Self.world(seed: 61, fault: .late(.seconds(2)))
        let short = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(1))
        #expect(network.run(until: short)?.error == .timedOut)
        #expect(network.now == .seconds(1))
        let start = network.now
        let long = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
        let connection = try #require(network.run(until: long)?.value)
        #expect(network.now - start > .seconds(2) && network.now - start < .milliseconds(2_010))
        connection.close()
        let faults = network.trace.filter { $0.kind == .fault }
        #expect(faults.map(\.detail) == Array(repeating: "name server resolves 2000000000ns late", count: 2))
        #expect(network.faultCount == 2)
    }

    @Test func aNameThatNeverResolvesHangsTheConnectUntilItsTimeout() throws {
        let (network, client) = try Self.world(seed: 62, fault: .never)
        let attempt = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(3))
        #expect(network.run(until: attempt)?.error == .timedOut)
        #expect(network.now == .seconds(3))
        #expect(!network.trace.contains { $0.kind == .resolve || $0.kind == .connect })
        #expect(network.trace.contains { $0.kind == .fault && $0.detail == "name server never resolves" })
        // Literal addresses skip the resolver.
        let byAddress = TCPConnection.connect(host: "10.0.0.1", port: 7, on: client.loop, timeout: .seconds(3))
        #expect(network.run(until: byAddress)?.value != nil)
    }

    @Test func aNameThatResolvesToADeadAddressGoesUnanswered() throws {
        let (network, client) = try Self.world(seed: 63, fault: .address("192.0.2.1"))
        let attempt = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(2))
        #expect(network.run(until: attempt)?.error == .timedOut)
        #expect(network.trace.contains { $0.kind == .drop && $0.detail.hasSuffix("no host at 192.0.2.1") })
    }

    @Test func aNameThatResolvesToAHostWithNothingListeningIsRefused() throws {
        let (network, client) = try Self.world(seed: 64, fault: .address("10.0.0.2"))
        let attempt = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(2))
        #expect(network.run(until: attempt)?.error == .connectFailed(errno: ECONNREFUSED))
        #expect(network.trace.contains { $0.kind == .fault && $0.detail == "name server resolves to 10.0.0.2" })
    }

    @Test func clearingTheFaultResolvesTheNameAgain() throws {
        let (network, client) = try Self.world(seed: 65, fault: .never)
        network.nameFaults["server"] = nil
        #expect(network.run(until: echo([7], from: client))?.value == [7])
        #expect(network.faultCount == 0)
    }

    @Test func theSameSeedResolvesLateTheSameWay() throws {
        func run() throws -> UInt64 {
            let (network, client) = try Self.world(seed: 66, fault: .late(.milliseconds(300)))
            _ = network.run(until: echo(pattern(50), from: client))
            network.runUntilIdle()
            return network.digest
        }
        #expect(try run() == run())
    }
}
