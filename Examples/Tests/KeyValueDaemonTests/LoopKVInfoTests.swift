import Foundation
import Testing

/// INFO's `# Loops` section from the built `loopkv`: one line per loop, from the loop's tick
/// totals, which the daemon counts (tick statistics on).
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
        #expect(server.stop() == 0)
    }

    /// The `# Loops` section of an INFO reply (a RESP bulk string): each line's name (`loop0`)
    /// with its `field=value` pairs, the values as numbers.
    static func loopsSection(of reply: String) throws -> [String: [String: Double]] {
        let lines = reply.components(separatedBy: "\r\n")
        let start = try #require(lines.firstIndex(of: "# Loops"))
        var section: [String: [String: Double]] = [:]
        for line in lines[(start + 1)...] {
            if line.isEmpty || line.hasPrefix("#") { break }
            let parts = line.split(separator: ":", maxSplits: 1)
            try #require(parts.count == 2, "not a key:value line: \(line)")
            var fields: [String: Double] = [:]
            for pair in parts[1].split(separator: ",") {
                let field = pair.split(separator: "=", maxSplits: 1)
                try #require(field.count == 2, "not a field=value pair: \(pair)")
                let number = try #require(Double(field[1]), "not a number: \(pair)")
                fields[String(field[0])] = number
            }
            section[String(parts[0])] = fields
        }
        return section
    }
}
