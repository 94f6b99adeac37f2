import Foundation
import Testing

/// `TOMORROWLAND_PENDING_PROMISES` as a process started with it sees it, through
/// `PendingPromiseProbe` (the variable is read once, before main).
@Suite("Pending-promise tracking from the environment")
struct PendingPromiseEnvironmentTests {
    /// Runs the probe with the variable set to `value` (unset for nil); its output lines.
    private func runProbe(_ value: String?) throws -> [String] {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let process = Process()
        process.executableURL = testBinary.deletingLastPathComponent().appendingPathComponent("PendingPromiseProbe")
        var environment = ProcessInfo.processInfo.environment
        environment["TOMORROWLAND_PENDING_PROMISES"] = value
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func oneRecordsEveryRootPromiseWithItsSiteAndStopCannotTurnItOff() throws {
        let lines = try runProbe("1")
        #expect(lines.contains("on true"))
        #expect(lines.contains("interval 1"))
        #expect(lines.contains("pending 10"))
        // The summary counts what the report lists, without building it.
        #expect(lines.contains("summary 10"))
        #expect(lines.contains("pending count 10"))
        #expect(lines.contains("oldest age ok true"))
        let expected = try #require(lines.first { $0.hasPrefix("expected site ") }?.dropFirst("expected site ".count))
        #expect(lines.contains("site \(expected)"))
        #expect(lines.contains("on after stop true"))
    }

    @Test func aNumberSamplesOneRootPromiseInThatMany() throws {
        let lines = try runProbe("5")
        #expect(lines.contains("interval 5"))
        #expect(lines.contains("pending 2"))
        #expect(lines.contains("summary 2"))
        #expect(lines.contains("oldest age ok true"))
    }

    @Test(arguments: [nil, "", "0", "off", "-3"])
    func unsetOrNotAPositiveNumberLeavesTrackingOff(value: String?) throws {
        let lines = try runProbe(value)
        #expect(lines.contains("on false"))
        #expect(lines.contains("interval 0"))
        #expect(lines.contains("pending 0"))
        #expect(lines.contains("summary 0"))
        #expect(lines.contains("oldest age ok true"))
    }
}
