import Testing
import Tomorrowland
import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Connection attempts and listeners: refused, unanswered and timed-out connects, a closed
/// listener, a full backlog, loopback names and names that do not resolve; on loopback sockets
/// and on the simulated network alike.
@Suite("Transport contract: connecting")
struct ConnectContractTests {
    /// A port nobody listens on (any more) refuses at once.
    @Test(arguments: Transport.allCases)
    func aConnectToAPortNobodyListensOnIsRefused(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let listener = try world.listen()
        let port = listener.localPort
        listener.close()
        let attempt = world.connect(to: port)
        _ = world.run(until: attempt)
        #expect(outcome(attempt) == "error connectFailed(errno: \(ECONNREFUSED))")
    }

    /// Closing a listener resets the connections still waiting in its backlog (the client's side
    /// is connected, the server never accepted it) and refuses new ones.
    @Test(arguments: Transport.allCases)
    func closingAListenerResetsItsBacklogAndRefusesNewConnections(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        var acceptedCount = 0
        let listener = try world.listen { _ in acceptedCount += 1 }
        listener.pauseAccepting()
        let waiting = world.run(until: world.connect(to: listener.localPort))?.value
        #expect(waiting != nil)
        world.settle()
        #expect(acceptedCount == 0)
        listener.close()
        if let waiting {
            let read = waiting.read()
            _ = world.run(until: read)
            #expect(outcome(read) == "error connectionReset")
        }
        let late = world.connect(to: listener.localPort)
        _ = world.run(until: late)
        #expect(outcome(late) == "error connectFailed(errno: \(ECONNREFUSED))")
        #expect(acceptedCount == 0)
    }

    /// A listener that does not accept holds `backlog + 1` connections, as Linux does; the
    /// next attempt goes unanswered (its SYN is dropped, and resent later) and times out. Once
    /// the listener accepts again it gets the waiting ones, oldest first.
    @Test(arguments: Transport.allCases)
    func aFullBacklogLeavesTheNextAttemptUnansweredUntilItTimesOut(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        var accepted: [UInt16] = []
        let listener = try world.listen(backlog: 2) { accepted.append($0.remoteDescription.port) }
        listener.pauseAccepting()
        var observed: [String] = []
        var clients: [TCPConnection] = []
        for index in 0..<4 {
            // Only the attempt that must time out gets a short limit: a loaded machine may take
            // long to run a loop turn, never to complete a loopback handshake.
            let timeout = index < 3 ? TransportWorld.timeLimit : .milliseconds(500)
            let attempt = world.connect(to: listener.localPort, timeout: timeout)
            _ = world.run(until: attempt)
            observed.append(attempt.result?.value == nil ? outcome(attempt) : "connected")
            if let client = attempt.result?.value { clients.append(client) }
        }
        #expect(observed == ["connected", "connected", "connected", "error timedOut"])
        listener.resumeAccepting()
        #expect(world.run { accepted.count == 3 })
        #expect(accepted == clients.map(\.localPort))
    }

    /// On the listener's own host "localhost" reaches a listener on every IPv4 address, and
    /// "::1" is refused at once (nothing listens on IPv6).
    @Test(arguments: Transport.allCases)
    func loopbackNamesOnTheListenersHost(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        var acceptedCount = 0
        let listener = try world.listen(host: "") { _ in acceptedCount += 1 }
        let byName = world.connect(to: listener.localPort, host: "localhost", from: world.serverLoop)
        _ = world.run(until: byName)
        #expect(byName.result?.value != nil, "\(outcome(byName))")
        #expect(world.run { acceptedCount == 1 })
        let overIPv6 = world.connect(to: listener.localPort, host: "::1", from: world.serverLoop)
        _ = world.run(until: overIPv6)
        #expect(outcome(overIPv6) == "error connectFailed(errno: \(ECONNREFUSED))")
        let overIPv4 = world.connect(to: listener.localPort, host: "127.0.0.1", from: world.serverLoop)
        _ = world.run(until: overIPv4)
        #expect(overIPv4.result?.value != nil, "\(outcome(overIPv4))")
    }

    /// A name no resolver knows fails the attempt with `addressResolutionFailed`. (The name is
    /// not a valid DNS name, so the system resolver answers from this machine without a query.)
    @Test(arguments: Transport.allCases)
    func aNameThatDoesNotResolveFailsTheAttempt(_ transport: Transport) throws {
        let world = TransportWorld(transport)
        let listener = try world.listen()
        let attempt = world.connect(to: listener.localPort, host: "no such host")
        _ = world.run(until: attempt)
        #expect(outcome(attempt) == "error addressResolutionFailed(host: \"no such host\")")
    }
}

extension String {
    /// The port of "address:port" or "[address]:port".
    fileprivate var port: UInt16 {
        UInt16(self[index(after: lastIndex(of: ":")!)...]) ?? 0
    }
}
