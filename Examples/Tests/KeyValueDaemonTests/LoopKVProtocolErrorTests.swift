import Foundation
import Testing

/// Bad input over a real socket: answered with a protocol error and closed, never a crash.
@Suite(.timeLimit(.minutes(2)))
struct LoopKVProtocolErrorTests {
    @Test(arguments: [
        ("*2\r\n$3\r\nGET\r\n:1\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"),
        ("*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"),
        ("*1\r\n$-7\r\n", "-ERR Protocol error: invalid bulk length\r\n"),
        ("ECHO \"open\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"),
    ])
    func malformedInputGetsAProtocolErrorAndIsClosed(input: String, reply: String) throws {
        let server = try LoopKVProcess()
        let client = try server.connect()
        #expect(try client.call("SET", "k", "v") == "+OK\r\n")
        try client.send(raw: input + "PING\r\n")
        #expect(try client.readUntilClosed() == reply)
        // The daemon lives on and serves others.
        #expect(try server.connect().call("GET", "k") == "$1\r\nv\r\n")
        #expect(server.stop() == 0)
    }

    @Test func anOversizedRequestIsRefusedBeforeItsBodyArrives() throws {
        let server = try LoopKVProcess(["--max-request-bytes", "1024"])
        let client = try server.connect()
        try client.send(raw: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n")
        #expect(try client.readUntilClosed() == "-ERR Protocol error: request exceeds the limit of 1024 bytes\r\n")
        let small = try server.connect()
        #expect(try small.call("SET", "k", String(repeating: "v", count: 900)).hasPrefix("+OK"))
        #expect(server.stop() == 0)
    }

    @Test func anOverlongInlineLineIsRefused() throws {
        let server = try LoopKVProcess(["--max-request-bytes", "1024"])
        let client = try server.connect()
        try client.send(raw: String(repeating: "a", count: 5000))
        #expect(try client.readUntilClosed() == "-ERR Protocol error: too big inline request\r\n")
        #expect(server.stop() == 0)
    }

    @Test func randomGarbageNeverCrashesTheDaemon() throws {
        let server = try LoopKVProcess(["--max-request-bytes", "4096"])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let client = try server.connect()
            let length = Int.random(in: 1...2000, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if Bool.random(using: &generator) { bytes.insert(UInt8(ascii: "*"), at: 0) }
            try client.send(bytes)
        }
        #expect(try server.connect().call("PING") == "+PONG\r\n")
        #expect(server.process.isRunning)
        #expect(server.stop() == 0)
    }
}
