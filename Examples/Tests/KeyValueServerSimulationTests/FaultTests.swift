import Testing
import TomorrowlandLoop
import TomorrowlandSimulation

/// Faults whose point is the server's answer to them, not the kernel: resets mid-request and a
/// client that stops reading. (Moved from the real-process `LoopKVFaultTests`; descriptor
/// exhaustion and SIGTERM under load stay there.)
@Suite struct FaultTests {
    private let latency = SimulatedServerWorld.latency

    @Test func clientsResetMidRequestAreForgottenTheInstantTheResetArrives() throws {
        let world = try SimulatedServerWorld()
        var resetClients: [SimulatedRESPClient] = []
        for _ in 0..<20 {
            let client = try world.connect()
            client.send(raw: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc")
            world.network.run(for: latency)
            world.network.reset(client.connection)
            resetClients.append(client)
        }
        let lastReset = world.network.now
        // The last reset reaches the server one segment later; from then on only the survivor
        // and the asking connection count.
        world.network.run(for: latency)
        let lastArrival = world.network.trace.last { $0.kind == .reset && $0.detail.hasSuffix("(by peer)") }
        #expect(lastArrival?.time == lastReset + latency)
        let survivor = try world.connect()
        #expect(world.call(survivor, "SET", "k", "v") == "+OK\r\n")
        #expect(try world.connectedClients() == 2)
        for client in resetClients {
            #expect(client.closed?.error == .connectionReset)
            #expect(world.serverClosed(client) != nil)
        }
        // None of the partial SETs was applied.
        #expect(world.call(survivor, "GET", "k") == "$1\r\nv\r\n")
        world.finish(resetClients + [survivor])
    }

    /// From `aClientThatStopsReadingHoldsBoundedMemory`: the real test measured the daemon's
    /// resident memory; here the bound is on what it computes. Each request pair is a GET of a
    /// 64 KiB value and an INCR, so the counter says how many the server executed for a client
    /// that reads nothing: about 2 MiB of replies (what the server bounds), not the 25 MiB it asked for.
    @Test func aClientThatStopsReadingMakesTheServerStopExecutingItsRequests() throws {
        let world = try SimulatedServerWorld()
        let setter = try world.connect()
        let value = String(repeating: "v", count: 64 * 1024)
        #expect(world.call(setter, "SET", "big", value) == "+OK\r\n")
        let reader = try world.connect(reads: false)
        let pair = RESPReplies.request(["GET", "big"]) + RESPReplies.request(["INCR", "n"])
        reader.send(bytes: Array([[UInt8]](repeating: pair, count: 400).joined()))
        world.network.run(for: .seconds(10))

        // "$2\r\n31\r\n": the counter is the bulk string's second line.
        let counter = world.call(setter, "GET", "n")?.split(whereSeparator: \.isNewline).last
        let executed = try #require(counter.flatMap { Int($0) })
        // What the server documents (`ClientConnection`): about one read's reply budget (1 MiB)
        // plus the connection's write high-water mark (1 MiB), and the request that passed it.
        #expect(executed <= 2 * (1 << 20) / value.count + 1, "executed \(executed) of 400")
        // Others are served meanwhile.
        #expect(world.call(setter, "PING") == "+PONG\r\n")

        // Once the client reads, every reply arrives, in order.
        reader.startReading(network: world.network)
        let getReply = Array("$65536\r\n\(value)\r\n".utf8)
        var expected: [UInt8] = []
        for index in 1...400 { expected += getReply + Array(":\(index)\r\n".utf8) }
        #expect(world.run(until: { reader.received.count >= expected.count }, timeLimit: .seconds(60)))
        #expect(reader.received == expected)
        world.finish([setter, reader])
    }
}
