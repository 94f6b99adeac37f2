import Foundation

/// curl, the real HTTP client the tests drive the service with (`make test-http-example`
/// installs it when it is missing).
struct Curl: Sendable {
    /// What one finished curl run printed: the body, then the status on the last line.
    struct Response: Sendable {
        let status: Int
        let body: String
    }

    /// A curl run that is still going, so that a test can hang it up.
    final class Running: Sendable {
        private let process: Process
        private let finished: AsyncStream<Void>

        fileprivate init(process: Process, finished: AsyncStream<Void>) {
            self.process = process
            self.finished = finished
        }

        /// Kills curl (SIGKILL): the kernel closes its socket, as when a client crashes or a
        /// user gives up, without a word of HTTP. Returns once curl has exited.
        func hangUp() async {
            kill(process.processIdentifier, SIGKILL)
            for await _ in finished {}
        }
    }

    static let path = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// GETs `url`, with `headers` (`"Name: value"`), and returns the status and body.
    static func get(_ url: String, headers: [String] = []) async throws -> Response {
        let output = Pipe()
        let headerArguments = headers.flatMap { ["--header", $0] }
        let (process, finished) = try start(
            ["--silent", "--show-error", "--write-out", "\n%{http_code}"] + headerArguments + [url], output)
        for await _ in finished {}
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0, let newline = text.lastIndex(of: "\n"),
            let status = Int(text[text.index(after: newline)...])
        else {
            throw CurlFailed(exitStatus: process.terminationStatus, output: text)
        }
        return Response(status: status, body: String(text[..<newline]))
    }

    /// Starts a GET of `url` and returns without waiting for the answer.
    static func startGet(_ url: String) throws -> Running {
        let (process, finished) = try start(["--silent", "--output", "/dev/null", url], nil)
        return Running(process: process, finished: finished)
    }

    private static func start(_ arguments: [String], _ output: Pipe?) throws -> (Process, AsyncStream<Void>) {
        guard let path else { throw CurlFailed(exitStatus: -1, output: "curl not found (apt-get install curl)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--max-time", "60"] + arguments
        process.standardOutput = output ?? FileHandle.nullDevice
        let (finished, continuation) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
        return (process, finished)
    }
}

/// curl did not run, or exited with an error (it prints the reason).
struct CurlFailed: Error, CustomStringConvertible {
    let exitStatus: Int32
    let output: String
    var description: String { "curl exited with \(exitStatus): \(output)" }
}
