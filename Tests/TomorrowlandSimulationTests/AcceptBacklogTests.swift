import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

@Suite struct AcceptBacklogTests {
    struct Observed {
        var first: Bool = false
        var impatient: TCPError?
        var patientConnectedAt: Duration?
        var drops: [Duration] = []
    }

    /// A listener with a backlog of 0, which holds one connection as Linux's accept queue does
    /// (`backlog + 1`), that does not accept until two seconds in; three clients connect at
    /// once: one fills the backlog, one gives up after 500 ms, one waits.
    private static func fullBacklog(seed: UInt64) throws -> (SimulatedNetwork, Observed) {
        let network = SimulatedNetwork(seed: seed)
        let server = network.addHost("server")
        let clients = (0..<3).map { network.addHost("client\($0)") }
        var options = TCPListenerOptions()
        options.backlog = 0
        let listener = try TCPListener.listen(host: "", port: 7, on: server.loop, options: options) { connection in
            connection.startReading { bytes in
                connection.enqueue(bytes)
                return bytes.count
            }
        }
        listener.pauseAccepting()
        network.schedule(after: .seconds(2), named: "resume accepting") { listener.resumeAccepting() }
        var observed = Observed()
        // The first attempt gets the backlog's one place: the kernel completes it before accept.
        let first = TCPConnection.connect(host: "server", port: 7, on: clients[0].loop, timeout: .seconds(5))
        observed.first = network.run(until: first)?.value != nil
        let impatient = TCPConnection.connect(
            host: "server", port: 7, on: clients[1].loop, timeout: .milliseconds(500))
        let patient = TCPConnection.connect(host: "server", port: 7, on: clients[2].loop, timeout: .seconds(10))
        observed.impatient = network.run(until: impatient)?.error
        if network.run(until: patient)?.value != nil { observed.patientConnectedAt = network.now }
        observed.drops = network.trace.filter { $0.kind == .drop && $0.detail.hasSuffix("full") }.map(\.time)
        first.result?.value?.close()
        patient.result?.value?.close()
        network.run(for: .seconds(1))
        listener.close()
        network.runUntilIdle()
        return (network, observed)
    }

    @Test func aFullBacklogDropsAttemptsWhichRetryUntilThereIsRoomOrTheyTimeOut() throws {
        let (_, observed) = try Self.fullBacklog(seed: 41)
        #expect(observed.first)
        // The impatient client hears nothing and times out.
        #expect(observed.impatient == .timedOut)
        // The patient one's SYN was dropped at ~0 s (with the impatient one's), again at ~1 s
        // (retransmitted after 1 s, still full), and gets in at ~3 s (after 2 s more), the
        // listener having emptied the backlog at 2 s.
        let connectedAt = try #require(observed.patientConnectedAt)
        #expect(connectedAt > .seconds(3) && connectedAt < .milliseconds(3_100))
        #expect(observed.drops.count == 3)
        #expect(observed.drops.filter { $0 < .milliseconds(100) }.count == 2)
        #expect(observed.drops.contains { $0 > .seconds(1) && $0 < .milliseconds(1_100) })
    }

    @Test func theSameSeedFillsTheBacklogTheSameWay() throws {
        let first = try Self.fullBacklog(seed: 42).0
        let second = try Self.fullBacklog(seed: 42).0
        #expect(first.digest == second.digest)
    }
}
