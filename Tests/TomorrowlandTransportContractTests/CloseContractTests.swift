import Testing
import Tomorrowland
import TomorrowlandLoop

/// Closing and half-closing, as the peer observes them: on loopback sockets and on the simulated
/// network alike.
@Suite("Transport contract: closing")
struct CloseContractTests {
    /// A close with input the kernel still holds unread is a reset, not an orderly end: the
    /// peer's pending read and `closed` report `connectionReset`.
    @Test(arguments: Transport.allCases)
    func closingWithUnreadInputResetsThePeer(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try world.connectedPair()
        _ = world.run(until: client.write(Array("unread".utf8)))
        #expect(world.run { world.unreadBytesInKernel(of: server) == 6 })
        let read = client.read()
        server.close()
        _ = world.run(until: read)
        #expect(outcome(read) == "error connectionReset")
        #expect(closedOutcome(client) == "connectionReset")
    }

    /// A close after everything was read is an orderly end: the peer reads what was sent, then
    /// end of input (`[]`).
    @Test(arguments: Transport.allCases)
    func closingWithEverythingReadEndsThePeersInputAfterTheBytes(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try world.connectedPair()
        _ = world.run(until: client.write(Array("ping".utf8)))
        let request = server.read(exactly: 4)
        _ = world.run(until: request)
        #expect(request.result?.value.map(text) == "ping")
        _ = world.run(until: server.write(Array("pong".utf8)))
        server.close()
        let reply = client.read(exactly: 4)
        _ = world.run(until: reply)
        #expect(reply.result?.value.map(text) == "pong")
        let end = client.read()
        _ = world.run(until: end)
        #expect(outcome(end) == "value []")
        client.close()
        _ = world.run(until: client.closed)
        #expect(closedOutcome(client) == "orderly")
        #expect(closedOutcome(server) == "orderly")
    }

    /// A half-close from the client: the server reads end of input and may still answer; once
    /// the server shuts down its output too, both connections close in order.
    @Test(arguments: Transport.allCases)
    func halfClosingTheClientsOutputLeavesTheServersOpen(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try world.connectedPair()
        try halfClose(world, closing: client, answering: server)
    }

    /// The same, the other way round: the server ends its output first.
    @Test(arguments: Transport.allCases)
    func halfClosingTheServersOutputLeavesTheClientsOpen(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let (client, server) = try world.connectedPair()
        try halfClose(world, closing: server, answering: client)
    }

    private func halfClose(
        _ world: TransportWorld, closing first: TCPConnection, answering second: TCPConnection
    )
        throws
    {
        _ = world.run(until: first.write(Array("last words".utf8)))
        first.shutdownOutput()
        let heard = second.read(exactly: 10)
        _ = world.run(until: heard)
        #expect(heard.result?.value.map(text) == "last words")
        let end = second.read()
        _ = world.run(until: end)
        #expect(outcome(end) == "value []")
        #expect(!second.isClosed)
        #expect(closedOutcome(first) == "pending")

        _ = world.run(until: second.write(Array("answer".utf8)))
        let answer = first.read(exactly: 6)
        _ = world.run(until: answer)
        #expect(answer.result?.value.map(text) == "answer")

        second.shutdownOutput()
        _ = world.run(until: second.closed)
        #expect(closedOutcome(second) == "orderly")
        let firstEnd = first.read()
        _ = world.run(until: firstEnd)
        #expect(outcome(firstEnd) == "value []")
        _ = world.run(until: first.closed)
        #expect(closedOutcome(first) == "orderly")
    }
}
