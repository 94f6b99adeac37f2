import Testing
import Tomorrowland
import TomorrowlandLoop

/// A writer blocked on a peer that does not read, when that peer goes away: on loopback sockets
/// and on the simulated network alike.
@Suite("Transport contract: a blocked writer")
struct BlockedWriterContractTests {
    /// More than the kernel's buffers on both sides take on loopback, so the write blocks.
    static let bulk = [UInt8](repeating: 0x2A, count: 48 << 20)

    /// The peer closes without reading what it was sent: its close is a reset, and the blocked
    /// write and `closed` fail with `connectionReset`.
    @Test(arguments: Transport.allCases)
    func aBlockedWriteFailsWhenThePeerClosesWithoutReading(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try blocked(world)
        let write = client.write([1])
        server.close()
        _ = world.run(until: write)
        #expect(outcome(write) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
    }

    /// The peer resets: the blocked write and `closed` fail with `connectionReset`.
    @Test(arguments: Transport.allCases)
    func aBlockedWriteFailsWhenThePeerResets(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try blocked(world)
        let write = client.write([1])
        world.abort(server)
        _ = world.run(until: write)
        #expect(outcome(write) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
    }

    /// A pair whose client has output the transport will not take (the server never reads).
    private func blocked(_ world: TransportWorld) throws -> (client: TCPConnection, server: TCPConnection) {
        let (client, server) = try world.connectedPair()
        client.enqueue(Self.bulk)
        // Blocked: the transport stopped taking bytes and the server's side holds what it took.
        guard world.run(until: { client.pendingOutputBytes > 0 && world.unreadBytesInKernel(of: server) > 0 }) else {
            throw ContractFailure("the write did not block")
        }
        world.settle()
        #expect(client.pendingOutputBytes > 0)
        return (client, server)
    }
}
