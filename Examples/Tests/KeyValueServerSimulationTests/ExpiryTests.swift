import Testing
import TomorrowlandSimulation

/// TTLs expire on the server's clock, here the virtual one: exactly at their deadline, and keys
/// nobody reads are swept. (Moved from the real-process `keysExpireInRealTime`, which slept 1 s.)
@Suite struct ExpiryTests {
    private let latency = SimulatedServerWorld.latency

    @Test func aKeyExpiresAtExactlyItsDeadlineAndUnreadOnesAreSwept() throws {
        let world = try SimulatedServerWorld()
        let client = try world.connect()
        #expect(world.call(client, "SET", "short", "v", "PX", "300") == "+OK\r\n")
        let setAt = try #require(world.serverReads.last).time
        #expect(world.call(client, "SET", "swept", "v", "PX", "300") == "+OK\r\n")
        #expect(world.call(client, "SET", "long", "v", "EX", "100") == "+OK\r\n")

        // Handled 1 ms before the deadline: still there, with 1 ms to live; handled at the
        // deadline: gone.
        world.advance(to: setAt + .milliseconds(299) - latency)
        client.send("PTTL", "short")
        world.advance(to: setAt + .milliseconds(300) - latency)
        client.send("GET", "short")
        client.send("TTL", "short")
        #expect(world.run(until: { client.replies.count == 6 }))
        #expect(client.replies.suffix(3) == [":1\r\n", "$-1\r\n", ":-2\r\n"])
        // Nobody touched "swept": the sweep (every 100 ms) removed it, so DBSIZE no longer counts it.
        world.network.run(for: .milliseconds(200))
        #expect(world.call(client, "DBSIZE") == ":1\r\n")
        #expect(world.call(client, "GET", "long") == "$1\r\nv\r\n")
        world.finish([client])
    }
}
