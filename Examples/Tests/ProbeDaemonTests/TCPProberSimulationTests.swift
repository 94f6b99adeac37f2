import Glibc
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation
import TomorrowlandTestSupport

@testable import ProbeCore

/// The daemon's own prober (`tcpProber`, unchanged) on a simulated host, against simulated
/// servers: the latencies it reports are the network's, exactly, because it reads `loop.now`.
@Suite("tcpProber on a simulated network")
struct TCPProberSimulationTests {
    /// Every segment (a name lookup's answer, a SYN, its answer) takes exactly this long.
    private let latency = Duration.milliseconds(3)

    /// A network with the prober's host and one server host per way of answering: "up" listens
    /// on port 80; "closed" listens on nothing; "refusing" refuses every connection; "silent"
    /// never answers.
    private func makeNetwork() throws -> (SimulatedNetwork, SimulatedHost, TCPListener) {
        let network = SimulatedNetwork(seed: 1, latency: .fixed(latency), splitsReadsAndWrites: false)
        let prober = network.addHost("prober")
        let up = network.addHost("up")
        network.addHost("closed")
        network.addHost("refusing").incomingConnections = .refused
        network.addHost("silent").incomingConnections = .unanswered
        let listener = try TCPListener.listen(host: "", port: 80, on: up.loop) { $0.close() }
        return (network, prober, listener)
    }

    /// One probe as the scheduler makes it: the prober, under the connect timeout.
    private func probe(
        _ host: String, port: UInt16 = 80, on loop: EventLoop, timeout: Duration = .seconds(2),
        backstop: Duration = .seconds(30)
    ) -> Promise<Duration, PromiseTimeoutError<ProbeFailure>> {
        tcpProber(on: loop, backstop: backstop)(ProbeEndpoint(host: host, port: port))
            .timeout(on: .loop(loop), delay: timeout)
    }

    @Test func aReachableServerIsUpWithTheNetworksExactLatency() throws {
        let (network, prober, listener) = try makeNetwork()
        // By name: the lookup's answer, the SYN, the SYN-ACK.
        #expect(network.run(until: probe("up", on: prober.loop)) == .value(latency * 3))
        // By address: no lookup.
        let started = network.now
        #expect(network.run(until: probe("10.0.0.2", on: prober.loop)) == .value(latency * 2))
        #expect(network.now == started + latency * 2)
        listener.close()
        #expect(network.runUntilIdle())
        // Each probe's connection was closed at both ends.
        #expect(network.trace.count { $0.kind == .close } == 4)
    }

    @Test func aRefusedConnectIsDownAfterOneRoundTrip() throws {
        let (network, prober, listener) = try makeNetwork()
        for host in ["closed", "refusing"] {
            let started = network.now
            let result = network.run(until: probe(host, on: prober.loop))
            #expect(result == .error(.rejected(.tcp(.connectFailed(errno: ECONNREFUSED)))), "\(host)")
            #expect(network.now == started + latency * 3, "\(host)")
        }
        listener.close()
        #expect(network.runUntilIdle())
    }

    @Test func anUnansweredConnectTimesOutAtExactlyTheConnectTimeout() throws {
        let (network, prober, listener) = try makeNetwork()
        let started = network.now
        let result = network.run(until: probe("silent", on: prober.loop, timeout: .milliseconds(500)))
        #expect(result == .error(.timedOut))
        #expect(network.now == started + .milliseconds(500))
        #expect(network.trace.contains { $0.kind == .drop && $0.detail.contains("silent does not answer") })
        // Without the scheduler's timeout, the connect's own backstop ends it, exactly as late.
        let backstopped = network.run(
            until: probe("silent", on: prober.loop, timeout: .seconds(60), backstop: .seconds(7)))
        #expect(backstopped == .error(.rejected(.tcp(.timedOut))))
        #expect(network.now == started + .milliseconds(500) + .seconds(7))
        listener.close()
        #expect(network.runUntilIdle())
    }

    /// A slow path: the prober is cut off from the server for 250 ms (the SYN waits, as a
    /// retransmission would), then the partition heals. The latency is the wait plus the two
    /// segments after it; under a shorter timeout, the same probe times out.
    @Test func aSlowServerIsUpWithItsDelayOrDownPastTheTimeout() throws {
        let (network, prober, listener) = try makeNetwork()
        let up = try #require(network.hosts.first { $0.name == "up" })
        for (timeout, expected) in [
            (Duration.seconds(2), PromiseResult<Duration, PromiseTimeoutError<ProbeFailure>>.value(.milliseconds(256))),
            (.milliseconds(200), .error(.timedOut)),
        ] {
            let started = network.now
            network.partition([prober], from: [up])
            let attempt = probe("up", on: prober.loop, timeout: timeout)
            let settled = Locked<Duration?>(nil)
            _ = attempt.tap(on: .immediate) { _ in settled.withLock { $0 = network.now - started } }
            network.run(for: .milliseconds(250))
            network.heal()
            #expect(network.run(until: attempt) == expected)
            #expect(settled.value == min(timeout, .milliseconds(256)))
            #expect(network.runUntilIdle(maxEvents: 1000))
        }
        listener.close()
        #expect(network.runUntilIdle())
    }
}
