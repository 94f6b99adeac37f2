import Testing
import TomorrowlandSimulation

/// Malformed input gets Redis's protocol error, after the replies to the good requests before
/// it, and the connection is closed at the instant the server read the bad bytes; nothing after
/// them is read. (Moved from the real-process `LoopKVProtocolErrorTests`.)
@Suite struct ProtocolErrorTests {
    private let latency = SimulatedServerWorld.latency

    @Test(arguments: [
        ("*2\r\n$3\r\nGET\r\n:1\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"),
        ("*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"),
        ("*1\r\n$-7\r\n", "-ERR Protocol error: invalid bulk length\r\n"),
        ("ECHO \"open\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"),
    ])
    func malformedInputGetsAProtocolErrorAndIsClosed(input: String, reply: String) throws {
        let world = try SimulatedServerWorld()
        let client = try world.connect()
        #expect(world.call(client, "SET", "k", "v") == "+OK\r\n")
        // A good request, the bad one, and one more good one in the same write.
        client.send(raw: "*1\r\n$4\r\nPING\r\n" + input + "PING\r\n")
        let sent = world.network.now
        #expect(world.run(until: { client.isClosed }))
        #expect(client.replies == ["+OK\r\n", "+PONG\r\n", reply])
        #expect(client.incompleteTail.isEmpty)
        #expect(world.serverClosed(client) == sent + latency)
        #expect(client.closed?.error == nil)
        #expect(world.log.times(of: "protocol error, closing") == [sent + latency])
        // The server lives on and serves others.
        let other = try world.connect()
        #expect(world.call(other, "GET", "k") == "$1\r\nv\r\n")
        world.finish([client, other])
    }

    @Test func anOversizedRequestIsRefusedFromItsHeaderBeforeItsBodyArrives() throws {
        let world = try SimulatedServerWorld { $0.maxRequestBytes = 1024 }
        let client = try world.connect()
        client.send(raw: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n")
        let sent = world.network.now
        #expect(world.run(until: { client.isClosed }))
        #expect(client.replies == ["-ERR Protocol error: request exceeds the limit of 1024 bytes\r\n"])
        #expect(world.serverClosed(client) == sent + latency)
        let small = try world.connect()
        #expect(world.call(small, "SET", "k", String(repeating: "v", count: 900)) == "+OK\r\n")
        world.finish([client, small])
    }

    @Test func anOverlongInlineLineIsRefused() throws {
        let world = try SimulatedServerWorld { $0.maxRequestBytes = 1024 }
        let client = try world.connect()
        client.send(raw: String(repeating: "a", count: 5000))
        #expect(world.run(until: { client.isClosed }))
        #expect(client.replies == ["-ERR Protocol error: too big inline request\r\n"])
        world.finish([client])
    }

    /// Seeded garbage (the real-process test drew it from the system's generator, so a failure
    /// could not be replayed): the server survives every one and serves the next client.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomGarbageNeverStopsTheServer(seed: UInt64) throws {
        let world = try SimulatedServerWorld(seed: seed, splitting: true) { $0.maxRequestBytes = 4096 }
        var random = world.network.makeRandom()
        var clients: [SimulatedRESPClient] = []
        for _ in 0..<50 {
            let client = try world.connect()
            var bytes = (0..<Int.random(in: 1...2000, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            if Bool.random(using: &random) { bytes.insert(UInt8(ascii: "*"), at: 0) }
            client.send(bytes: bytes)
            clients.append(client)
        }
        world.network.run(for: .seconds(1))
        let last = try world.connect()
        #expect(world.call(last, "PING") == "+PONG\r\n")
        world.finish(clients + [last])
    }
}
