import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation
import TomorrowlandTestSupport

/// A network, its hosts' loops and what ran on them are freed once the caller lets the network
/// go: loops refer to their simulation weakly, and link ends to their peers only while the
/// network's link table says so.
@Suite struct SimulationReleaseTests {
    /// Each connect by name leaked its `NameResolution` under LeakSanitizer: the network held its
    /// loops and each loop held the network, so nothing of a run was ever freed. Failed before
    /// the loops' reference became weak (all three references stayed set).
    @Test func aNetworkItsLoopsAndItsConnectionsAreFreedAfterTheRun() throws {
        let (network, loop, connection) = try runOneEchoByName()
        #expect(network.isReleased)
        #expect(loop.isReleased)
        #expect(connection.isReleased)
    }

    /// A loop kept after its network went fails what needs the network, rather than touching it.
    @Test func aLoopWhoseNetworkIsGoneFailsToListen() throws {
        var kept: EventLoop?
        do {
            let network = SimulatedNetwork(seed: 2)
            kept = network.addHost("orphan").loop
        }
        let loop = try #require(kept)
        #expect(throws: TCPError.closed) {
            try TCPListener.listen(host: "", port: 7, on: loop) { _ in }
        }
        #expect(TCPListener.bind(host: "", port: 7, on: loop) { _ in }.result?.error == .closed)
    }

    /// Runs one echo through a name, returns weak references to the network, a client loop and
    /// the client's connection.
    private func runOneEchoByName() throws -> (
        WeakReference<SimulatedNetwork>, WeakReference<EventLoop>, WeakReference<TCPConnection>
    ) {
        let network = SimulatedNetwork(seed: 1)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        let connecting = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
        guard case .value(let connection)? = network.run(until: connecting) else {
            Issue.record("no connection")
            throw TCPError.closed
        }
        let echoed = connection.write([1, 2, 3]).flatMap(on: .loop(client.loop)) { connection.read(exactly: 3) }
        #expect(network.run(until: echoed) == .value([1, 2, 3]))
        connection.close()
        listener.close()
        #expect(network.runUntilIdle())
        return (WeakReference(network), WeakReference(client.loop), WeakReference(connection))
    }
}
