import Testing
import Tomorrowland
import TomorrowlandLoop

/// A peer's reset, as the connection that receives it reports it: on loopback sockets and on the
/// simulated network alike.
@Suite("Transport contract: resets")
struct ResetContractTests {
    /// A pending read hears of the reset at once: it rejects, and `closed` says why.
    @Test(arguments: Transport.allCases)
    func aResetRejectsThePendingReadAndClosesTheConnection(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try world.connectedPair()
        let read = client.read()
        world.abort(server)
        _ = world.run(until: read)
        #expect(outcome(read) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
        #expect(client.isClosed)
    }

    /// With no read pending the connection does not look at its input, so the reset waits in the
    /// kernel: `closed` stays pending and `isClosed` false until the next read.
    @Test(arguments: Transport.allCases)
    func aResetWithNoReadPendingIsReportedByTheNextRead(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let client = try resetWaiting(in: world)
        let read = client.read()
        _ = world.run(until: read)
        #expect(outcome(read) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
    }

    /// The write that discovers a reset rejects with `connectionReset`, the error that closed the
    /// connection, like `closed`.
    @Test(arguments: Transport.allCases)
    func aResetWithNoReadPendingIsReportedByTheNextWrite(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let client = try resetWaiting(in: world)
        let write = client.write(Array("late".utf8))
        _ = world.run(until: write)
        #expect(outcome(write) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
        #expect(client.isClosed)
    }

    /// Bytes that arrived before the reset are read first; the read after them reports the reset.
    @Test(arguments: Transport.allCases)
    func bytesThatArrivedBeforeAResetAreReadFirst(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let client = try resetWaiting(in: world, after: "hello")
        let first = client.read()
        _ = world.run(until: first)
        #expect(first.result?.value.map(text) == "hello")
        let second = client.read()
        _ = world.run(until: second)
        #expect(outcome(second) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
    }

    /// A streaming handler is handed the bytes that came before the reset, then `closed` reports
    /// the reset.
    @Test(arguments: Transport.allCases)
    func aStreamingHandlerGetsTheBytesBeforeTheReset(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let client = try resetWaiting(in: world, after: "hello")
        var streamed: [UInt8] = []
        client.startReading { bytes in
            streamed += bytes
            return bytes.count
        }
        _ = world.run(until: client.closed)
        #expect(text(streamed) == "hello")
        #expect(closedOutcome(client) == "connectionReset")
    }

    /// A client connection whose peer sent `message` (if any) and then reset, with the bytes and
    /// the reset in its kernel and the connection itself not having looked: `closed` pending,
    /// `isClosed` false.
    private func resetWaiting(in world: TransportWorld, after message: String = "") throws -> TCPConnection {
        let (client, server) = try world.connectedPair()
        if !message.isEmpty {
            _ = world.run(until: server.write(Array(message.utf8)))
            #expect(world.run { world.unreadBytesInKernel(of: client) == message.utf8.count })
        }
        world.abort(server)
        #expect(world.run { world.kernelHasReset(client) })
        world.settle()
        #expect(closedOutcome(client) == "pending")
        #expect(!client.isClosed)
        return client
    }
}
