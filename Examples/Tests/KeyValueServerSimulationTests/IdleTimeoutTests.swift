import Testing
import TomorrowlandSimulation

/// `--idle-timeout`: a client silent for the configured time is closed at exactly that instant,
/// never before; every read restarts the count. (Moved from the real-process
/// `idleClientsAreClosedAndActiveOnesKept`, which slept 1.5 s and could only say "closed by
/// now".)
@Suite struct IdleTimeoutTests {
    private let latency = SimulatedServerWorld.latency

    @Test func anIdleClientIsClosedAtExactlyTheTimeoutAfterItsLastRequest() throws {
        let world = try SimulatedServerWorld { $0.idleTimeout = .seconds(5) }
        let client = try world.connect()
        #expect(world.call(client, "PING") == "+PONG\r\n")
        let lastRead = try #require(world.serverReads.last).time

        // One nanosecond before the timeout the connection is open at both ends.
        world.advance(to: lastRead + .seconds(5) - .nanoseconds(1))
        #expect(world.serverClosed(client) == nil)
        #expect(!client.isClosed)

        #expect(world.run(until: { client.isClosed }))
        #expect(world.serverClosed(client) == lastRead + .seconds(5))
        #expect(world.log.times(of: "idle timeout, closing") == [lastRead + .seconds(5)])
        // An orderly close: the client hears the end of output one segment later.
        #expect(client.endOfInputTime == lastRead + .seconds(5) + latency)
        #expect(client.closed?.error == nil)
        world.finish([client])
    }

    @Test func aClientThatNeverSpeaksIsClosedAtTheTimeoutAfterItsAccept() throws {
        let world = try SimulatedServerWorld { $0.idleTimeout = .seconds(2) }
        let client = try world.connect()
        let accepted = try #require(world.serverAccepted(client))
        #expect(world.run(until: { client.isClosed }))
        #expect(world.serverClosed(client) == accepted + .seconds(2))
        #expect(client.received.isEmpty)
        world.finish([client])
    }

    @Test func everyRequestRestartsTheTimeoutAndActiveClientsStay() throws {
        let world = try SimulatedServerWorld { $0.idleTimeout = .seconds(1) }
        let idle = try world.connect()
        let active = try world.connect()
        #expect(world.call(idle, "PING") == "+PONG\r\n")
        let idleRead = try #require(world.serverReads.last).time
        // The active client speaks every 0.9 s for 9 s: never silent for the timeout's length.
        for _ in 0..<10 {
            world.network.run(for: .milliseconds(900) - latency * 2)
            #expect(world.call(active, "PING") == "+PONG\r\n")
        }
        #expect(world.serverClosed(idle) == idleRead + .seconds(1))
        #expect(world.serverClosed(active) == nil)
        #expect(!active.isClosed)
        // Once it stops, it is closed a timeout after its last request.
        let activeRead = try #require(world.serverReads.last).time
        #expect(world.run(until: { active.isClosed }))
        #expect(world.serverClosed(active) == activeRead + .seconds(1))
        #expect(world.log.times(of: "idle timeout, closing") == [idleRead + .seconds(1), activeRead + .seconds(1)])
        world.finish([idle, active])
    }

    @Test func withoutATimeoutASilentClientStaysForTenMinutes() throws {
        let world = try SimulatedServerWorld()
        let client = try world.connect()
        world.network.run(for: .seconds(600))
        #expect(!client.isClosed)
        #expect(world.serverClosed(client) == nil)
        #expect(world.call(client, "PING") == "+PONG\r\n")
        world.finish([client])
    }
}
