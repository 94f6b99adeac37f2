import Testing
import TomorrowlandLoop
import TomorrowlandSimulation

/// `--max-clients`: the client beyond the maximum gets `-ERR max number of clients reached` and
/// is closed at once; a slot frees the instant a client's close is seen. (Moved from the
/// real-process `clientsBeyondMaxClientsAreRefusedWithAnError`, which polled with sleeps for the
/// slot to free.)
@Suite struct MaxClientsTests {
    @Test func theClientBeyondTheMaximumGetsTheErrorAndIsClosedAtItsAccept() throws {
        let world = try SimulatedServerWorld { $0.maxClients = 2 }
        let first = try world.connect()
        let second = try world.connect()
        #expect(world.call(first, "PING") == "+PONG\r\n")
        #expect(world.call(second, "PING") == "+PONG\r\n")

        let third = try world.connect()
        #expect(world.run(until: { third.isClosed }))
        #expect(third.replies == ["-ERR max number of clients reached\r\n"])
        #expect(third.incompleteTail.isEmpty)
        // Refused in the accept itself: the reply and the close leave at the accept's instant.
        let accepted = try #require(world.serverAccepted(third))
        #expect(world.serverClosed(third) == accepted)
        #expect(third.endOfInputTime == accepted + SimulatedServerWorld.latency)
        #expect(third.closed?.error == nil)
        #expect(world.log.times(of: "max clients reached, refusing") == [accepted])

        // The others are still served.
        #expect(world.call(second, "PING") == "+PONG\r\n")
        #expect(world.call(first, "QUIT") == "+OK\r\n")
        #expect(world.run(until: { first.isClosed }))
        // The slot is free as soon as the server closed the first: the next client is admitted.
        let fourth = try world.connect()
        #expect(world.call(fourth, "PING") == "+PONG\r\n")
        // And the server is full again.
        let fifth = try world.connect()
        #expect(world.run(until: { fifth.isClosed }))
        #expect(fifth.replies == ["-ERR max number of clients reached\r\n"])
        world.finish([first, second, third, fourth, fifth])
    }
}
