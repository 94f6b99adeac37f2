import Foundation
import Synchronization
import Testing

/// A `loopkv` process started for one test: on an ephemeral loopback port, its log collected.
final class LoopKVProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port: UInt16 = 0
    // `log` is written by the reader thread and read by the test: behind a pthread mutex (via
    // NSLock), which TSan sees.
    private let lock = NSLock()
    private var logText = ""
    private let logPipe = Pipe()

    /// The built `loopkv` next to the test bundle (the test target depends on it).
    static var binary: URL {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("loopkv")
    }

    /// Starts `loopkv --port 0 <arguments>` and waits (up to 20 s) for its "listening on" line;
    /// with `fileLimit`, under `ulimit -n <fileLimit>` (through /bin/sh, which then execs it);
    /// `environment` adds to (or overrides) the test's own environment.
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
                lock.lock()
                logText += String(decoding: data, as: UTF8.self)
                lock.unlock()
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let port = Self.listeningPort(in: log) {
                self.port = port
                return
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.01)
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
    var log: String {
        lock.lock()
        defer { lock.unlock() }
        return logText
    }

    private static func listeningPort(in log: String) -> UInt16? {
        guard let range = log.range(of: "listening on 127.0.0.1:") else { return nil }
        let digits = log[range.upperBound...].prefix { $0.isNumber }
        return UInt16(digits)
    }

    /// A new client connection to the daemon.
    func connect() throws -> RESPClient {
        try RESPClient(port: port)
    }

    /// Sends `signal` and waits (up to `timeout` seconds) for the process to exit; its exit status,
    /// or nil if it was killed by a signal or did not exit in time.
    func stop(signal: Int32 = SIGTERM, timeout: Double = 20) -> Int32? {
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}

enum LoopKVProcessError: Error {
    case didNotStart(log: String)
}
