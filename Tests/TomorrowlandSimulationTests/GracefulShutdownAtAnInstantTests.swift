import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct GracefulShutdownAtAnInstantTests {
    struct Observed {
        var reader: [UInt8]?
        var stalledReaderGot: [UInt8]?
        var lateConnect: TCPError?
        var drainedAt: Duration?
        var stalledServerSideClosedAt: Duration?
    }

    static let replySize = 100_000
    static let sigterm = Duration.milliseconds(20)
    static let grace = Duration.seconds(1)

    /// A server that sends every client a large reply; two clients, one reading, one that stops
    /// reading; the daemon's SIGTERM path (the listener's graceful shutdown) starts at 20 ms.
    private static func shutdownWorld(seed: UInt64) throws -> (SimulatedNetwork, Observed) {
        let network = SimulatedNetwork(seed: seed, window: 16_384)
        let server = network.addHost("server")
        let reader = network.addHost("reader")
        let staller = network.addHost("staller")
        let stalledServerSideClosedAt = SimulatedBox<Duration?>(nil)
        let listener = try TCPListener.listen(host: "", port: 7, on: server.loop) { connection in
            if connection.remoteDescription.hasPrefix(staller.address + ":") {
                connection.closed.tap(on: .immediate) { _ in stalledServerSideClosedAt.value = network.now }
            }
            connection.enqueue(pattern(replySize))
        }
        let drainedAt = SimulatedBox<Duration?>(nil)
        network.schedule(at: sigterm, named: "SIGTERM") {
            listener.shutdownGracefully(within: grace).tap(on: .immediate) { _ in drainedAt.value = network.now }
        }
        let read = TCPConnection.connect(host: "server", port: 7, on: reader.loop, timeout: .seconds(5))
            .flatMap(on: .loop(reader.loop)) { readToEnd($0) }
        let stalled = TCPConnection.connect(host: "server", port: 7, on: staller.loop, timeout: .seconds(5))
        network.run(for: .milliseconds(30))
        // After the SIGTERM: new clients are refused.
        let late = TCPConnection.connect(host: "server", port: 7, on: reader.loop, timeout: .seconds(5))
        var observed = Observed()
        observed.lateConnect = network.run(until: late)?.error
        observed.reader = network.run(until: read)?.value
        // The stalled client reads only after the grace period.
        network.run(for: .milliseconds(1_500))
        if let connection = stalled.result?.value {
            observed.stalledReaderGot = network.run(until: readToEnd(connection))?.value
        }
        observed.drainedAt = drainedAt.value
        observed.stalledServerSideClosedAt = stalledServerSideClosedAt.value
        network.runUntilIdle()
        return (network, observed)
    }

    @Test func aGracefulShutdownAtAChosenInstantFlushesReadersAndCutsStalledPeersAfterTheGrace() throws {
        let (network, observed) = try Self.shutdownWorld(seed: 71)
        let sigterm = try #require(network.trace.first { $0.kind == .action && $0.detail == "SIGTERM" })
        #expect(sigterm.time == Self.sigterm)
        #expect(observed.lateConnect == .connectFailed(errno: ECONNREFUSED))
        // The reading client got its whole reply, then the end of input.
        #expect(observed.reader == pattern(Self.replySize))
        // The stalled one was closed at the end of the grace period, its reply cut short.
        let cutAt = try #require(observed.stalledServerSideClosedAt)
        #expect(cutAt == Self.sigterm + Self.grace)
        let partial = try #require(observed.stalledReaderGot)
        #expect(partial.count < Self.replySize)
        #expect(partial == pattern(partial.count))
        #expect(observed.drainedAt == Self.sigterm + Self.grace)
    }

    @Test func theSameSeedShutsDownTheSameWay() throws {
        let first = try Self.shutdownWorld(seed: 72).0
        let second = try Self.shutdownWorld(seed: 72).0
        #expect(first.digest == second.digest)
    }
}
