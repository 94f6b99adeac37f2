import Foundation
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

@Suite struct SimulatedNetworkTests {
    @Test func echoServerAndClientsExchangeBytesIntact() throws {
        let (network, intact) = try runEchoWorld(seed: 1)
        #expect(intact)
        #expect(network.trace.contains { $0.kind == .accept })
        #expect(network.trace.contains { $0.kind == .deliver })
        // Four clients, four connections, each closed at both ends.
        #expect(network.trace.filter { $0.kind == .close }.count == 8)
    }

    @Test func theSameSeedGivesTheSameTraceAndDigest() throws {
        let (first, _) = try runEchoWorld(seed: 42)
        let (second, _) = try runEchoWorld(seed: 42)
        #expect(first.trace == second.trace)
        #expect(first.digest == second.digest)
    }

    @Test func differentSeedsGiveDifferentDigests() throws {
        let digests = try (1...5).map { try runEchoWorld(seed: $0).0.digest }
        #expect(Set(digests).count == digests.count)
    }

    @Test func readsAndWritesSplitDownToSingleBytes() throws {
        let (network, intact) = try runEchoWorld(seed: 3, clientCount: 8)
        #expect(intact)
        let sizes = network.trace.filter { $0.kind == .deliver }.compactMap { entry in
            entry.detail.split(separator: " ").last.flatMap { Int($0.dropLast()) }
        }
        #expect(sizes.contains(1))
        #expect(sizes.contains { $0 > 1 })
    }

    @Test func timeIsVirtualAndLoopsReadIt() throws {
        let network = SimulatedNetwork(seed: 9)
        let host = network.addHost("server")
        let start = host.loop.now
        let (promise, resolver) = Promise<Duration, NoError>.makeWithResolver()
        _ = host.loop.schedule(after: .seconds(30)) { resolver.fulfill(with: host.loop.now) }
        let wall = ContinuousClock.now
        let result = network.run(until: promise)
        #expect(result == .value(start + .seconds(30)))
        #expect(network.now == .seconds(30))
        // Far less than the 30 s it simulated, with room for a loaded machine.
        #expect(ContinuousClock.now - wall < .seconds(20))
    }

    @Test func aPeerThatStopsReadingFillsTheWindowAndTheWriterStopsBeingWritable() throws {
        let network = SimulatedNetwork(seed: 11, window: 16_384)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let accepted = SimulatedBox<TCPConnection?>(nil)
        // The server accepts and does not read.
        let listener = try TCPListener.listen(host: "", port: 7, on: server.loop) { accepted.value = $0 }
        var options = TCPConnectionOptions()
        options.writeHighWaterMark = 65_536
        let connecting = TCPConnection.connect(
            host: "server", port: 7, on: client.loop, timeout: .seconds(5), options: options)
        guard case .value(let connection)? = network.run(until: connecting) else {
            Issue.record("no connection")
            return
        }
        let writableAgain = SimulatedBox<Bool>(false)
        connection.onWritable = { writableAgain.value = true }
        let payload = pattern(1_000_000)
        connection.enqueue(payload)
        network.run(for: .seconds(1))
        // The window is full: the rest waits in the connection's buffer.
        #expect(connection.pendingOutputBytes >= payload.count - 16_384)
        #expect(!connection.isWritable)
        #expect(!writableAgain.value)

        // The server starts reading: everything arrives, in order, and the writer hears of it.
        let received = SimulatedBox<[UInt8]>([])
        let serverConnection = try #require(accepted.value)
        serverConnection.startReading { bytes in
            received.value += bytes
            return bytes.count
        }
        network.run(for: .seconds(10))
        #expect(received.value == payload)
        #expect(connection.pendingOutputBytes == 0)
        #expect(writableAgain.value)
        connection.close()
        listener.close()
        network.runUntilIdle()
    }

    @Test func closeAfterFlushingDeliversEverythingThenEndOfInput() throws {
        let network = SimulatedNetwork(seed: 12, window: 8192)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let payload = pattern(200_000)
        let listener = try TCPListener.listen(host: "", port: 7, on: server.loop) { connection in
            connection.enqueue(payload)
            connection.close(afterFlushing: true)
        }
        let read = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
            .flatMap(on: .loop(client.loop)) { readToEnd($0) }
        #expect(network.run(until: read) == .value(payload))
        listener.close()
        network.runUntilIdle()
    }

    @Test func halfCloseLetsThePeerFinishItsReply() throws {
        let network = SimulatedNetwork(seed: 13)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        let closedWith = SimulatedBox<TCPError??>(nil)
        let reply = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
            .flatMap(on: .loop(client.loop)) { connection in
                connection.closed.tap(on: .immediate) { closedWith.value = $0.value }
                connection.enqueue(pattern(3000))
                connection.shutdownOutput()
                return readToEnd(connection)
            }
        #expect(network.run(until: reply) == .value(pattern(3000)))
        network.runUntilIdle()
        // Both directions ended: the connection closed in order.
        #expect(closedWith.value == .some(.none))
        #expect(network.trace.contains { $0.kind == .endOfOutput })
        listener.close()
    }

    @Test func aResetMidStreamFailsTheReadsOfBothEnds() throws {
        let network = SimulatedNetwork(seed: 14)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let accepted = SimulatedBox<TCPConnection?>(nil)
        let listener = try TCPListener.listen(host: "", port: 7, on: server.loop) { accepted.value = $0 }
        guard
            case .value(let connection)? = network.run(
                until: TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5)))
        else {
            Issue.record("no connection")
            return
        }
        let read = connection.read(exactly: 10)
        connection.enqueue(pattern(5))
        network.run(for: .milliseconds(10))
        let serverConnection = try #require(accepted.value)
        network.reset(serverConnection)
        network.runUntilIdle()
        #expect(read.result == .error(.connectionReset))
        #expect(connection.closed.result == .value(.connectionReset))
        // The server's connection was not reading: as from a kernel, its reads get the bytes
        // that arrived before the reset, and the read after them learns of the reset.
        var serverBytes: [UInt8] = []
        var serverError: TCPError?
        while serverError == nil && serverBytes.count <= 5 {
            let serverRead = serverConnection.read(maxBytes: 100)
            network.runUntilIdle()
            switch serverRead.result {
            case .value(let bytes)?: serverBytes += bytes
            case .error(let error)?: serverError = error
            default: serverError = .closed
            }
        }
        #expect(serverBytes == Array(pattern(5).prefix(serverBytes.count)))
        #expect(serverError == .connectionReset)
        #expect(serverConnection.closed.result == .value(.connectionReset))
        #expect(network.trace.contains { $0.kind == .fault && $0.detail.hasPrefix("reset") })
        #expect(network.trace.contains { $0.kind == .reset && $0.detail.hasSuffix("(by peer)") })
        listener.close()
    }

    @Test func connectingToAPortNobodyListensOnIsRefused() {
        let network = SimulatedNetwork(seed: 15)
        _ = network.addHost("server")
        let client = network.addHost("client")
        let attempt = TCPConnection.connect(host: "server", port: 9, on: client.loop, timeout: .seconds(5))
        #expect(network.run(until: attempt)?.error == .connectFailed(errno: ECONNREFUSED))
        #expect(network.trace.contains { $0.kind == .refused })
    }

    @Test func aHostThatRefusesConnectionsRefusesEvenWithAListener() throws {
        let network = SimulatedNetwork(seed: 16)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        server.incomingConnections = .refused
        let attempt = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
        #expect(network.run(until: attempt)?.error == .connectFailed(errno: ECONNREFUSED))
        listener.close()
    }

    @Test func aHostThatNeverAnswersMakesConnectTimeOutOnVirtualTime() throws {
        let network = SimulatedNetwork(seed: 17)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        server.incomingConnections = .unanswered
        let attempt = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(3))
        #expect(network.run(until: attempt)?.error == .timedOut)
        #expect(network.now >= .seconds(3) && network.now < .seconds(4))
        #expect(network.trace.contains { $0.kind == .drop })
        listener.close()
    }

    @Test func aPartitionHoldsTrafficUntilItHeals() throws {
        let network = SimulatedNetwork(seed: 18)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        guard
            case .value(let connection)? = network.run(
                until: TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5)))
        else {
            Issue.record("no connection")
            return
        }
        network.partition([client], from: [server])
        let reply = connection.write(pattern(100)).flatMap(on: .loop(client.loop)) { connection.read(exactly: 100) }
        network.run(for: .seconds(60))
        #expect(reply.result == nil)
        network.heal()
        #expect(network.run(until: reply) == .value(pattern(100)))
        #expect(network.trace.contains { $0.kind == .fault && $0.detail.hasPrefix("partition") })
        #expect(network.trace.contains { $0.kind == .fault && $0.detail == "heal" })
        connection.close()
        listener.close()
        network.runUntilIdle()
    }

    @Test func aConnectAcrossAPartitionTimesOutAndOneAfterTheHealConnects() throws {
        let network = SimulatedNetwork(seed: 20)
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try startEchoServer(on: server)
        network.partition([client], from: [server])
        let across = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(2))
        #expect(network.run(until: across)?.error == .timedOut)
        network.heal()
        let after = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(2))
        let connection = try #require(network.run(until: after)?.value)
        connection.close()
        listener.close()
        network.runUntilIdle()
    }

    @Test func aCrashedHostResetsItsConnectionsAndShutsItsLoopsDown() throws {
        let network = SimulatedNetwork(seed: 19)
        let server = network.addHost("server")
        let client = network.addHost("client")
        _ = try startEchoServer(on: server)
        guard
            case .value(let connection)? = network.run(
                until: TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5)))
        else {
            Issue.record("no connection")
            return
        }
        let read = connection.read(exactly: 1)
        network.crash(server)
        network.runUntilIdle()
        #expect(read.result == .error(.connectionReset))
        #expect(server.isCrashed)
        #expect(!server.loop.execute {})
        #expect(network.trace.contains { $0.kind == .fault && $0.detail == "crash server" })
        // A crashed host answers nothing.
        let again = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(2))
        #expect(network.run(until: again)?.error == .timedOut)
    }

    @Test func listenersGetAddressInUseForATakenPort() throws {
        let network = SimulatedNetwork(seed: 20)
        let server = network.addHost("server")
        let listener = try startEchoServer(on: server)
        #expect(throws: TCPError.bindFailed(errno: EADDRINUSE)) { try startEchoServer(on: server) }
        listener.close()
    }

    @Test func aSeedReplaysTheSameDigestInAnotherProcessAndOpensNoDescriptorNorThread() throws {
        let first = try runProbe(seed: 7)
        let second = try runProbe(seed: 7)
        let other = try runProbe(seed: 8)
        #expect(first == second)
        #expect(first.digest != other.digest)
        #expect(first.descriptorsBefore == first.descriptorsAfter)
        #expect(first.threadsBefore == first.threadsAfter)
    }
}

/// A mutable cell for tests' callbacks, all of which run on the simulation's one thread.
final class SimulatedBox<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// What SimulationDigestProbe printed.
struct ProbeOutput: Equatable {
    var digest: String
    var descriptorsBefore: String
    var descriptorsAfter: String
    var threadsBefore: String
    var threadsAfter: String
    /// `faults=F` with `faults`, empty otherwise.
    var faults = ""
}

/// Runs SimulationDigestProbe (built next to the test bundle) for `seed`, with every fault of a
/// fault plan if `faults`, and parses its last line.
func runProbe(seed: UInt64, faults: Bool = false) throws -> ProbeOutput {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let url = testBinary.deletingLastPathComponent().appendingPathComponent("SimulationDigestProbe")
    try #require(FileManager.default.isExecutableFile(atPath: url.path), "build the SimulationDigestProbe target")
    let process = Process()
    process.executableURL = url
    process.arguments = faults ? [String(seed), "faults"] : [String(seed)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    try #require(process.terminationStatus == 0, "SimulationDigestProbe failed: \(line)")
    var fields: [String: String] = [:]
    for field in line.split(separator: " ") {
        let parts = field.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
    }
    let descriptors = (fields["fds"] ?? "").components(separatedBy: "->")
    let threads = (fields["threads"] ?? "").components(separatedBy: "->")
    try #require(descriptors.count == 2 && threads.count == 2, "unexpected probe output: \(line)")
    return ProbeOutput(
        digest: fields["digest"] ?? "", descriptorsBefore: descriptors[0], descriptorsAfter: descriptors[1],
        threadsBefore: threads[0], threadsAfter: threads[1], faults: fields["faults"] ?? "")
}
