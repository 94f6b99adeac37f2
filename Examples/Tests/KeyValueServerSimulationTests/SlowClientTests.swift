import Testing
import TomorrowlandSimulation

/// Slow clients ("slowloris"): a request dribbled one byte at a time. The server answers it once
/// complete; what bounds such a client is the idle timeout, which counts from the last byte read
/// (as Redis's `timeout` does), `--max-request-bytes` (checked from the headers, see
/// `ProtocolErrorTests`) and `--max-clients`. (The real-process
/// `requestsSplitIntoSingleBytesAreAnswered` sent its bytes without pauses.)
@Suite struct SlowClientTests {
    private let latency = SimulatedServerWorld.latency
    private let request = Array("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$5\r\nhello\r\n".utf8)

    /// Sends `request` one byte every `gap`, then runs until the last byte has been read.
    private func dribble(_ world: SimulatedServerWorld, _ client: SimulatedRESPClient, every gap: Duration) {
        for (index, byte) in request.enumerated() {
            if index > 0 { world.network.run(for: gap) }
            guard !client.isClosed else { return }
            client.send(bytes: [byte])
        }
        world.network.run(for: latency)
    }

    @Test func aRequestDribbledOneByteAtATimeIsAnsweredOnceComplete() throws {
        let world = try SimulatedServerWorld()
        let client = try world.connect()
        dribble(world, client, every: .milliseconds(100))
        // One read per byte, and the reply only after the last.
        #expect(world.bytesRead(from: client) == request.count)
        #expect(world.serverReads.count == request.count)
        let lastRead = try #require(world.serverReads.last).time
        #expect(world.run(until: { !client.replies.isEmpty }))
        #expect(client.replies == ["+OK\r\n"])
        #expect(world.network.now == lastRead + latency)
        #expect(world.call(client, "GET", "a") == "$5\r\nhello\r\n")
        world.finish([client])
    }

    @Test func aDribblerSlowerThanTheIdleTimeoutIsClosedATimeoutAfterItsLastByte() throws {
        let world = try SimulatedServerWorld { $0.idleTimeout = .seconds(1) }
        let client = try world.connect()
        dribble(world, client, every: .milliseconds(1500))
        // The first byte was read, the second was sent after the close: nothing more.
        let firstRead = try #require(world.serverReads.first).time
        #expect(world.serverReads.count == 1)
        #expect(world.serverClosed(client) == firstRead + .seconds(1))
        #expect(client.received.isEmpty)
        world.finish([client])
    }

    @Test func aDribblerWithinTheIdleTimeoutKeepsItsConnectionAndIsAnswered() throws {
        let world = try SimulatedServerWorld { $0.idleTimeout = .seconds(1) }
        let client = try world.connect()
        let started = world.network.now
        dribble(world, client, every: .milliseconds(900))
        #expect(world.run(until: { !client.replies.isEmpty }))
        // Its request took 30 times the timeout, and it is served.
        #expect(world.network.now == started + .milliseconds(900) * (request.count - 1) + latency * 2)
        #expect(client.replies == ["+OK\r\n"])
        #expect(world.serverClosed(client) == nil)
        world.finish([client])
    }
}
