import Foundation
import Testing
import TomorrowlandTestSupport

/// A `loopkv` process started for one test: on an ephemeral loopback port, its log collected.
///
/// `@unchecked Sendable`: `port` is set once, in `init`, before the object is shared; the log,
/// which the reader thread writes while the test reads it, is behind `logText`'s lock.
final class LoopKVProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port: UInt16 = 0
    private let logText = Locked("")
    private let logPipe = Pipe()

    /// The built `loopkv` next to the test bundle (the test target depends on it).
    static var binary: URL {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("loopkv")
    }

    /// Starts `loopkv --port 0 <arguments>` and waits (within the toolkit's generous bound) for
    /// its "listening on" line; with `fileLimit`, under `ulimit -n <fileLimit>` (through /bin/sh,
    /// which then execs it); `environment` adds to (or overrides) the test's own environment.
    init(_ arguments: [String] = [], fileLimit: Int? = nil, environment: [String: String] = [:]) throws {
        if let fileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "ulimit -n \(fileLimit) && exec \"$0\" \"$@\"", Self.binary.path, "--port", "0"] + arguments
        } else {
            process.executableURL = Self.binary
            process.arguments = ["--port", "0"] + arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        process.standardError = logPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let handle = logPipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                logText.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }
        var listening: UInt16?
        _ = waitUntil {
            listening = Self.listeningPort(in: log)
            return listening != nil || !process.isRunning
        }
        if let listening {
            port = listening
            return
        }
        process.terminate()
        throw LoopKVProcessError.didNotStart(log: log)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Everything the daemon logged so far.
    var log: String { logText.value }

    private static func listeningPort(in log: String) -> UInt16? {
        guard let range = log.range(of: "listening on 127.0.0.1:") else { return nil }
        let digits = log[range.upperBound...].prefix { $0.isNumber }
        return UInt16(digits)
    }

    /// A new client connection to the daemon.
    func connect() throws -> RESPClient {
        try RESPClient(port: port)
    }

    /// Sends `signal` and waits (up to the toolkit's generous bound) for the process to exit; its
    /// exit status, or nil if it was killed by a signal or did not exit in time.
    func stop(signal: Int32 = SIGTERM) -> Int32? {
        kill(process.processIdentifier, signal)
        guard waitUntil({ !process.isRunning }) else { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}

enum LoopKVProcessError: Error {
    case didNotStart(log: String)
}
