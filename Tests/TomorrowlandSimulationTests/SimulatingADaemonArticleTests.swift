import Foundation
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

#if canImport(Glibc)
    import Glibc
#endif

// The article "Simulating a daemon" (TomorrowlandSimulation.docc/SimulatingADaemon.md) quotes the
// code between the `snippet` markers verbatim; `theArticleQuotesThisFile` checks that it still does.

// snippet: daemon
/// The daemon: answers each line with "+" and the line, and closes a connection that sends
/// nothing for `idleTimeout`. It takes its loop from its caller, and reads time from that loop.
func serveLines(on loop: EventLoop, port: UInt16, idleTimeout: Duration) throws -> TCPListener {
    try TCPListener.listen(host: "", port: port, on: loop) { connection in
        answerLines(on: connection, idleTimeout: idleTimeout)
    }
}

func answerLines(on connection: TCPConnection, idleTimeout: Duration) {
    let loop = connection.loop
    _ = connection.read(upTo: [10], maxBytes: 1024)
        .timeout(on: .loop(loop), delay: idleTimeout)
        .then(on: .loop(loop)) { line in
            connection.enqueue(Array("+".utf8) + line)
            answerLines(on: connection, idleTimeout: idleTimeout)
        }
        .catch(on: .loop(loop)) { _ in connection.close(afterFlushing: true) }
}
// snippet: end

@Suite struct SimulatingADaemonArticleTests {
    // snippet: test
    @Test func theServerAnswersThenClosesAnIdleClientOnTime() throws {
        // Every segment takes exactly 1 ms: each instant below is exact.
        let network = SimulatedNetwork(seed: 1, latency: .fixed(.milliseconds(1)))
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try serveLines(on: server.loop, port: 7, idleTimeout: .seconds(2))

        let connecting = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(1))
        let connection = try #require(network.run(until: connecting)?.value)
        let sent = network.now
        connection.enqueue(Array("hello\n".utf8))
        let reply = connection.read(upTo: [10], maxBytes: 1024)
        #expect(network.run(until: reply)?.value == Array("+hello\n".utf8))
        #expect(network.now == sent + .milliseconds(2))  // one segment there, one back

        // Silent from now on: the server closes 2 s after it read the line, and the client
        // hears the end of input one segment later.
        let end = connection.read()
        #expect(network.run(until: end)?.value == [])
        #expect(network.now == sent + .milliseconds(1) + .seconds(2) + .milliseconds(1))

        connection.close()
        listener.close()
        #expect(network.runUntilIdle())  // nothing left: no timer, no segment in flight
    }
    // snippet: end

    // snippet: faults
    @Test func aPartitionDelaysTheReplyUntilItHeals() throws {
        let network = SimulatedNetwork(seed: 2, latency: .fixed(.milliseconds(1)))
        let server = network.addHost("server")
        let client = network.addHost("client")
        let listener = try serveLines(on: server.loop, port: 7, idleTimeout: .seconds(2))
        let connection = try #require(
            network.run(until: TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(1)))?
                .value)

        network.partition([client], from: [server])  // segments between them wait...
        connection.enqueue(Array("hello\n".utf8))
        let reply = connection.read(upTo: [10], maxBytes: 1024)
        network.run(for: .milliseconds(500))
        #expect(reply.result == nil)
        let healed = network.now
        network.heal()  // ...and go again, in order, when it heals
        #expect(network.run(until: reply)?.value == Array("+hello\n".utf8))
        #expect(network.now == healed + .milliseconds(2))

        network.reset(connection)  // both ends fail with TCPError.connectionReset
        #expect(network.run(until: connection.read())?.error == .connectionReset)
        #expect(network.trace.contains { $0.kind == .fault && $0.detail.hasPrefix("reset") })
        listener.close()
        #expect(network.runUntilIdle())
    }
    // snippet: end

    // snippet: signals
    @Test func theDaemonStopsThroughItsOwnSignalHandling() throws {
        let network = SimulatedNetwork(seed: 1, latency: .fixed(.milliseconds(1)))
        let server = network.addHost("server")
        let listener = try serveLines(on: server.loop, port: 7, idleTimeout: .seconds(2))
        // The daemon's own handling, as it runs in production: stop on the first SIGTERM or SIGINT.
        TerminationSignals.first(on: server.loop).tap(on: .loop(server.loop)) { _ in
            _ = listener.shutdownGracefully(within: .seconds(5))
        }
        network.signal(SIGTERM, to: server, at: .seconds(3))

        network.run(for: .seconds(2))
        #expect(server.listeningPorts == [7])
        network.run(for: .seconds(2))
        #expect(server.listeningPorts.isEmpty)
        let signal = try #require(network.trace.first { $0.kind == .action })
        #expect(signal.detail == "signal SIGTERM to server")
        #expect(signal.time == .seconds(3))
    }
    // snippet: end

    /// The article quotes the code between this file's snippet markers verbatim, in order.
    @Test func theArticleQuotesThisFile() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let article = try String(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(
                    "Sources/TomorrowlandSimulation/TomorrowlandSimulation.docc/SimulatingADaemon.md"),
            encoding: .utf8)
        let snippets = Self.snippets(in: source)
        #expect(snippets.count == 4)
        for snippet in snippets {
            #expect(article.contains(snippet), "the article no longer quotes:\n\(snippet)")
        }
    }

    /// The code between each "// snippet: NAME" line and the next "// snippet: end", its common
    /// indentation removed.
    private static func snippets(in source: String) -> [String] {
        var snippets: [String] = []
        var current: [Substring]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// snippet: end", let lines = current {
                let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                snippets.append(lines.map { $0.dropFirst(min(indent, $0.count)) }.joined(separator: "\n"))
                current = nil
            } else if trimmed.hasPrefix("// snippet: ") {
                current = []
            } else {
                current?.append(line)
            }
        }
        return snippets
    }
}
