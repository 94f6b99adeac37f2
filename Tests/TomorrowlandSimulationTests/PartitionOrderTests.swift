import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

@Suite struct PartitionOrderTests {
    /// Segments a partition held arrive after the heal in the order they were sent, and before
    /// any segment of the same connection sent later or still in flight at the heal (loopkv-sim
    /// seed 24 saw a request's bytes reordered after a heal before this held).
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func aHealDeliversEachConnectionsBytesInOrder(seed: UInt64) throws {
        let network = SimulatedNetwork(seed: seed)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        let message = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let reply = echo(message, from: client)
        network.run(for: .milliseconds(3))
        network.partition([server], from: [client])
        network.run(for: .milliseconds(5))
        network.heal()
        network.partition([server], from: [client])
        network.run(for: .microseconds(700))
        network.heal()
        network.runUntilIdle()
        listener.close()
        network.runUntilIdle()
        let intact = reply.result?.value == message
        #expect(intact)
    }
}
