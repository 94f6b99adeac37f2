import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `loopprobe` against real sockets and checks its output and exit status.
@Suite("loopprobe, the executable")
struct LoopProbeIntegrationTests {
    /// The `loopprobe` binary, built next to the test bundle.
    private var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("loopprobe")
    }

    /// A listening socket on 127.0.0.1 that never accepts; `backlog` 0 makes it drop connects
    /// once one connection waits in its queue.
    private func listeningSocket(backlog: Int32) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A port nothing listens on.
    private func closedPort() throws -> UInt16 {
        let (fd, port) = try listeningSocket(backlog: 1)
        close(fd)
        return port
    }

    /// Starts `process` with a watchdog: a run still going after 30 s is killed (the test then
    /// fails on its exit status instead of hanging).
    private func launch(_ process: Process) throws {
        try process.run()
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { [process] in
            if process.isRunning { kill(pid, SIGKILL) }
        }
    }

    /// Reads `pipe` until the text contains `marker` or the pipe ends; returns everything read.
    private func read(_ handle: FileHandle, until marker: String, into text: inout String) -> Bool {
        while !text.contains(marker) {
            let data = handle.availableData
            if data.isEmpty { return false }
            text += String(decoding: data, as: UTF8.self)
        }
        return true
    }

    @Test func reportsAnOpenAndAClosedPortThenExitsAfterTheRounds() throws {
        let (fd, openPort) = try listeningSocket(backlog: 16)
        defer { close(fd) }
        let downPort = try closedPort()
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "--interval", "0.1", "--rounds", "2", "--connect-timeout", "2", "--retries", "1", "--retry-delay", "0.01",
            "127.0.0.1:\(openPort)", "127.0.0.1:\(downPort)",
        ]
        let output = Pipe()
        process.standardOutput = output
        try launch(process)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("127.0.0.1:\(openPort) is up (latency "))
        #expect(text.contains("127.0.0.1:\(downPort) is down: connect failed (ECONNREFUSED)"))
        #expect(text.contains("done after 2 round(s)"))
        // States did not change in round 2: one line per endpoint.
        #expect(text.components(separatedBy: "127.0.0.1:\(openPort) is").count == 2)
    }

    @Test func anUnresolvableNameIsReportedDownBesideAReachableEndpoint() throws {
        // `.invalid` never resolves (RFC 6761); the name goes through the system resolver, off
        // the loop.
        let (fd, openPort) = try listeningSocket(backlog: 16)
        defer { close(fd) }
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "--rounds", "1", "--connect-timeout", "5", "--retries", "0",
            "unresolvable.invalid:80", "127.0.0.1:\(openPort)",
        ]
        let output = Pipe()
        process.standardOutput = output
        try launch(process)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("unresolvable.invalid:80 is down: cannot resolve unresolvable.invalid"), "\(text)")
        #expect(text.contains("127.0.0.1:\(openPort) is up (latency "), "\(text)")
    }

    @Test func sigtermCancelsTheProbeInFlightAndExitsZero() throws {
        // A full backlog: the daemon's connect hangs until cancelled.
        let (fd, port) = try listeningSocket(backlog: 0)
        defer { close(fd) }
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(filler) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)

        let process = Process()
        process.executableURL = binary
        process.arguments = ["--log-level", "debug", "--connect-timeout", "30", "127.0.0.1:\(port)"]
        let output = Pipe()
        process.standardOutput = output
        let started = ContinuousClock.now
        try launch(process)
        var text = ""
        #expect(read(output.fileHandleForReading, until: "connecting to 127.0.0.1:\(port)", into: &text), "\(text)")
        process.terminate()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "\(text)")
        // The ServiceGroup trapped the signal (its debug line names it) and shut the services
        // down gracefully: the probe in flight was cancelled.
        #expect(text.contains("Signal caught. Shutting down the group."), "\(text)")
        #expect(text.contains("SIGTERM"), "\(text)")
        #expect(text.contains("graceful shutdown: cancelled the probes in flight, stopped after 0 complete round(s)"))
        // Well before the 30 s connect timeout: the attempt was cancelled, not waited out.
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func sigintDuringTheIntervalStopsAfterTheCompletedRoundsAndExitsZero() throws {
        let (fd, openPort) = try listeningSocket(backlog: 16)
        defer { close(fd) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--interval", "60", "127.0.0.1:\(openPort)"]
        let output = Pipe()
        process.standardOutput = output
        try launch(process)
        var text = ""
        #expect(read(output.fileHandleForReading, until: "127.0.0.1:\(openPort) is up", into: &text), "\(text)")
        kill(process.processIdentifier, SIGINT)
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("stopped after 1 complete round(s)"), "\(text)")
    }

    @Test func invalidEndpointsAreRejectedWithAUsageError() throws {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["localhost"]
        let errors = Pipe()
        process.standardError = errors
        try launch(process)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
        #expect(text.contains("'localhost' is not host:port"))
    }
}
