import Testing
import TomorrowlandSimulation

/// How requests reach the server: pipelined, split anywhere, binary, inline. (Moved from the
/// real-process `LoopKVCommandTests`: here the seed decides where reads and writes split, and a
/// failure replays.)
@Suite struct RequestFramingTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func pipelinedRequestsSplitAnywhereAreAnsweredInOrder(seed: UInt64) throws {
        let world = try SimulatedServerWorld(
            seed: seed, latency: .uniform(.microseconds(50) ... .milliseconds(2)), splitting: true)
        let client = try world.connect()
        var batch: [UInt8] = []
        for index in 0..<500 {
            batch += RESPReplies.request(["SET", "k\(index)", "x"])
            batch += RESPReplies.request(["INCR", "n"])
        }
        batch += Array("PING\r\n".utf8)
        client.send(bytes: batch)
        #expect(world.run(until: { client.replies.count == 1001 }))
        var expected: [String] = []
        for index in 0..<500 { expected += ["+OK\r\n", ":\(index + 1)\r\n"] }
        #expect(client.replies == expected + ["+PONG\r\n"])
        #expect(world.call(client, "DBSIZE") == ":501\r\n")
        // Reads really were split.
        #expect(world.serverReads.count > 1)
        world.finish([client])
    }

    @Test func binaryValuesRoundTrip() throws {
        let world = try SimulatedServerWorld(seed: 5, splitting: true)
        let client = try world.connect()
        let value: [UInt8] = (0...255).map { UInt8($0) }
        client.send(bytes: Array("*3\r\n$3\r\nSET\r\n$3\r\nbin\r\n$256\r\n".utf8) + value + [13, 10])
        client.send("GET", "bin")
        let expected = Array("+OK\r\n$256\r\n".utf8) + value + [13, 10]
        #expect(world.run(until: { client.received.count >= expected.count }))
        #expect(client.received == expected)
        #expect(world.call(client, "EXISTS", "bin") == ":1\r\n")
        world.finish([client])
    }

    @Test func inlineRequestsWork() throws {
        let world = try SimulatedServerWorld(seed: 6, splitting: true)
        let client = try world.connect()
        client.send(raw: "SET greeting \"hello world\"\r\nGET greeting\r\n")
        #expect(world.run(until: { client.replies.count == 2 }))
        #expect(client.replies == ["+OK\r\n", "$11\r\nhello world\r\n"])
        world.finish([client])
    }
}
