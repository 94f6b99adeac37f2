import Glibc
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

/// The daemon's graceful shutdown on a SIGTERM sent at a chosen virtual instant: loopkv's own
/// signal handling (`KeyValueProcess`: `KeyValueServer.stop()` within the grace period), as a
/// supervisor stopping the daemon starts it. How a real process hears the signal (its masks,
/// libevent's handler) is `LoopKVLifecycleTests`'.
@Suite struct GracefulShutdownTests {
    private let latency = SimulatedServerWorld.latency

    /// From `sigtermAnswersRequestsInFlightThenExitsZero`: every request the server read gets its
    /// reply before the close, even replies still waiting at the server behind a full window.
    @Test func repliesInFlightAreSentThenEveryClientIsClosedAndNewOnesRefused() throws {
        // A 4 KiB window, and replies about five times the size of their requests: at the stop,
        // most replies still wait in the server's output.
        let world = try SimulatedServerWorld(window: 4096)
        let client = try world.connect()
        let idle = try world.connect()
        let value = String(repeating: "v", count: 200)
        #expect(world.call(idle, "SET", "v", value) == "+OK\r\n")
        let pair = RESPReplies.request(["INCR", "n"]) + RESPReplies.request(["GET", "v"])
        client.send(bytes: Array([[UInt8]](repeating: pair, count: 1000).joined()))
        var expected: [String] = []
        for index in 1...1000 { expected += [":\(index)\r\n", "$200\r\n\(value)\r\n"] }
        let expectedBytes = expected.reduce(0) { $0 + $1.utf8.count }

        // Shut down the instant the server has read the last request.
        #expect(world.run(until: { world.bytesRead(from: client) == 1000 * pair.count }))
        #expect(client.received.count + world.network.window < expectedBytes, "replies wait at the server")
        let stopAt = world.network.now
        let stopped = world.sendSIGTERM()

        #expect(world.run(until: { client.isClosed && idle.isClosed }))
        #expect(client.replies == expected)
        #expect(client.incompleteTail.isEmpty)
        #expect(client.closed?.error == nil)
        // The idle client had nothing pending: closed at the stop, heard one segment later.
        #expect(world.serverClosed(idle) == stopAt)
        #expect(idle.endOfInputTime == stopAt + latency)
        // New clients are refused from the stop on.
        let late = SimulatedServerWorld.connect(from: world.addClientHost())
        #expect(world.network.run(until: late)?.error == .connectFailed(errno: ECONNREFUSED))
        world.finish([client, idle], stopped: stopped)
        #expect(stopped.result?.value != nil)
        #expect(world.log.times(of: "shutdown grace period over, closing remaining clients").isEmpty)
    }

    /// From `sigtermWithAPartialRequestClosesAndExitsZero`.
    @Test func aPartialRequestAtTheStopGetsNoReplyAndIsClosed() throws {
        let world = try SimulatedServerWorld()
        let client = try world.connect()
        client.send(raw: "*2\r\n$3\r\nGET\r\n$5\r\nab")
        world.network.run(for: .milliseconds(100))
        let stopAt = world.network.now
        let stopped = world.sendSIGTERM()
        #expect(world.run(until: { client.isClosed }))
        #expect(client.received.isEmpty)
        #expect(world.serverClosed(client) == stopAt)
        #expect(client.endOfInputTime == stopAt + latency)
        #expect(client.closed?.error == nil)
        world.finish([client], stopped: stopped)
    }

    /// From `aGracePeriodThatRunsOutClosesClientsThatDoNotReadAndExitsZero`: a client that asked
    /// for far more than the window holds and reads nothing keeps its connection open through the
    /// grace period, and is closed at exactly its end.
    @Test func aClientThatDoesNotReadIsClosedAtExactlyTheEndOfTheGracePeriod() throws {
        let grace = Duration.milliseconds(500)
        let world = try SimulatedServerWorld { $0.shutdownGrace = grace }
        let setter = try world.connect()
        let value = String(repeating: "v", count: 512 * 1024)
        #expect(world.call(setter, "SET", "big", value) == "+OK\r\n")
        let reader = try world.connect(reads: false)
        for _ in 0..<20 { reader.send("GET", "big") }
        world.network.run(for: .milliseconds(300))
        let stopAt = world.network.now
        let stopped = world.sendSIGTERM()

        // The setter had nothing pending: closed at once.
        #expect(world.run(until: { setter.isClosed }))
        #expect(world.serverClosed(setter) == stopAt)
        // The reader's connection stays open at the server until the grace period's last instant.
        world.advance(to: stopAt + grace - .nanoseconds(1))
        #expect(world.serverClosed(reader) == nil)
        #expect(stopped.result == nil)
        world.network.run(for: .nanoseconds(1))
        #expect(world.serverClosed(reader) == stopAt + grace)
        #expect(world.log.times(of: "shutdown grace period over, closing remaining clients") == [stopAt + grace])
        // The process exits at the grace period's end.
        #expect(stopped.result?.value != nil)

        // What the reader gets when it reads: what was in flight (at most the window, less than
        // its first reply), then the end; the rest of its replies never left the server.
        reader.startReading(network: world.network)
        #expect(world.run(until: { reader.isClosed }))
        let reply = Array("$524288\r\n\(value)\r\n".utf8)
        #expect(!reader.received.isEmpty)
        #expect(reader.received.count <= world.network.window)
        #expect(reader.received[...] == reply.prefix(reader.received.count))
        #expect(reader.closed?.error == nil)
        world.finish([setter, reader], stopped: stopped)
    }

    /// The stop closes a loop's clients in the order they connected, and its promise resolves on
    /// the server's loop at the instant the last one is closed: a run replays the same in every
    /// process (it used to close them in hash order and resolve on a Dispatch queue).
    @Test func theStopClosesClientsInTheOrderTheyConnectedAndResolvesWithinTheRun() throws {
        let world = try SimulatedServerWorld()
        let clients = try (0..<24).map { _ in try world.connect() }
        world.network.run(for: .milliseconds(10))
        let stopAt = world.network.now
        let stopped = world.sendSIGTERM()
        #expect(world.run(until: { clients.allSatisfy(\.isClosed) }))
        #expect(stopped.result?.value != nil)

        let ends = clients.compactMap { world.serverEnd(of: $0) }
        #expect(ends.count == clients.count)
        let closes = world.network.trace.filter { $0.kind == .close && ends.contains($0.detail) }
        #expect(closes.map(\.detail) == ends)
        #expect(closes.allSatisfy { $0.time == stopAt })
        world.finish(clients, stopped: stopped)
    }
}
