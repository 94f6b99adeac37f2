import Foundation
import Testing
import TomorrowlandTestSupport

/// INFO's `# Loops` section from the built `loopkv`: one line per loop, from the loop's tick
/// totals, which the daemon counts (tick statistics on); and, with the pending-promise report on,
/// the pending root promises.
@Suite(.timeLimit(.minutes(2)))
struct LoopKVInfoTests {
    @Test func infoHasALoopsSectionWithOneLinePerLoopThatCountsTheWorkServed() throws {
        let server = try LoopKVProcess(["--loops", "2"])
        let client = try server.connect()
        for _ in 0..<5 { #expect(try client.call("PING") == "+PONG\r\n") }
        let first = try Self.loopsSection(of: client.call("INFO"))
        #expect(first.keys.sorted() == ["loop0", "loop1"])
        for fields in first.values {
            #expect(Array(fields.keys).sorted() == ["busy_ms", "items", "stalls", "ticks", "waiting_ms"])
            #expect(fields["stalls"] == 0)
            #expect((fields["busy_ms"] ?? -1) >= 0)
            #expect((fields["waiting_ms"] ?? -1) >= 0)
        }
        // Each PING was a read event on the client's loop, counted by the tick after it.
        let items = first.values.compactMap { $0["items"] }.reduce(0, +)
        #expect(items >= 5)
        #expect(first.values.compactMap { $0["ticks"] }.reduce(0, +) >= 5)

        for _ in 0..<3 { #expect(try client.call("PING") == "+PONG\r\n") }
        let second = try Self.loopsSection(of: client.call("INFO"))
        // The INFO before and the three PINGs since: four more read events at least.
        #expect(second.values.compactMap { $0["items"] }.reduce(0, +) >= items + 4)
        // The pending-promise report is off: the section has no pending-promise lines.
        #expect(try Self.parseLoopsSection(of: client.call("INFO")).values.isEmpty)
        #expect(server.stop() == 0)
    }

    @Test func withThePendingPromiseReportOnTheSectionCountsThePendingPromises() throws {
        let server = try LoopKVProcess(["--loops", "2"], environment: ["TOMORROWLAND_PENDING_PROMISES": "1"])
        let client = try server.connect()
        #expect(try client.call("SET", "k", "v") == "+OK\r\n")
        let first = try Self.parseLoopsSection(of: client.call("INFO"))
        #expect(first.loops.keys.sorted() == ["loop0", "loop1"])
        #expect(first.values.keys.sorted() == ["oldest_pending_promise_ms", "pending_promises"])
        // An idle daemon's pending root promises are its process's two (the first termination
        // signal, and the exit that follows it: `KeyValueProcess`) and its connections' `closed`
        // promises (TCPConnection's, fulfilled when the connection closes): one per client.
        let processPromises = 2.0
        #expect(first.values["pending_promises"] == processPromises + 1)
        let firstAge = try #require(first.values["oldest_pending_promise_ms"])
        #expect(firstAge > 0)

        let second = try server.connect()
        #expect(try second.call("PING") == "+PONG\r\n")
        let two = try Self.parseLoopsSection(of: client.call("INFO")).values
        #expect(two["pending_promises"] == processPromises + 2)
        // The process's promises, older than any connection's.
        #expect(try #require(two["oldest_pending_promise_ms"]) >= firstAge)

        // The second client goes: once the daemon has closed its side, one is left.
        second.abort()
        var left = two["pending_promises"]
        let closed = waitUntil {
            left = try? Self.parseLoopsSection(of: client.call("INFO")).values["pending_promises"]
            return left == processPromises + 1
        }
        #expect(closed, "pending_promises stayed \(String(describing: left))")
        #expect(server.stop() == 0)
    }

    /// The `# Loops` section of an INFO reply (a RESP bulk string): each loop line's name
    /// (`loop0`) with its `field=value` pairs, the values as numbers.
    static func loopsSection(of reply: String) throws -> [String: [String: Double]] {
        try parseLoopsSection(of: reply).loops
    }

    /// The `# Loops` section of an INFO reply: its loop lines (`loop0:ticks=…,items=…`) by name
    /// with their `field=value` pairs, and its plain `key:value` lines (`pending_promises:3`), the
    /// values as numbers.
    static func parseLoopsSection(
        of reply: String
    ) throws -> (loops: [String: [String: Double]], values: [String: Double]) {
        let lines = reply.components(separatedBy: "\r\n")
        let start = try #require(lines.firstIndex(of: "# Loops"))
        var section: [String: [String: Double]] = [:]
        var values: [String: Double] = [:]
        for line in lines[(start + 1)...] {
            if line.isEmpty || line.hasPrefix("#") { break }
            let parts = line.split(separator: ":", maxSplits: 1)
            try #require(parts.count == 2, "not a key:value line: \(line)")
            if !parts[1].contains("=") {
                let number = try #require(Double(parts[1]), "not a number: \(line)")
                values[String(parts[0])] = number
                continue
            }
            var fields: [String: Double] = [:]
            for pair in parts[1].split(separator: ",") {
                let field = pair.split(separator: "=", maxSplits: 1)
                try #require(field.count == 2, "not a field=value pair: \(pair)")
                let number = try #require(Double(field[1]), "not a number: \(pair)")
                fields[String(field[0])] = number
            }
            section[String(parts[0])] = fields
        }
        return (section, values)
    }
}
