import Foundation
import Testing

/// Time, limits and shutdown over a real socket: expiry, idle timeout, max clients, signals.
@Suite(.timeLimit(.minutes(2)))
struct LoopKVLifecycleTests {
    @Test func keysExpireInRealTime() throws {
        let server = try LoopKVProcess()
        let client = try server.connect()
        #expect(try client.call("SET", "short", "v", "PX", "300") == "+OK\r\n")
        #expect(try client.call("SET", "swept", "v", "PX", "300") == "+OK\r\n")
        #expect(try client.call("SET", "long", "v", "EX", "100") == "+OK\r\n")
        #expect(try client.call("GET", "short") == "$1\r\nv\r\n")
        Thread.sleep(forTimeInterval: 1.0)
        #expect(try client.call("GET", "short") == "$-1\r\n")
        #expect(try client.call("TTL", "short") == ":-2\r\n")
        // Nobody touched "swept": the sweep timer removed it, so DBSIZE no longer counts it.
        #expect(try client.call("DBSIZE") == ":1\r\n")
        #expect(try client.call("GET", "long") == "$1\r\nv\r\n")
        #expect(server.stop() == 0)
    }

    @Test func idleClientsAreClosedAndActiveOnesKept() throws {
        let server = try LoopKVProcess(["--idle-timeout", "1"])
        let idle = try server.connect()
        let active = try server.connect()
        #expect(try idle.call("PING") == "+PONG\r\n")
        // The active client speaks every 0.1 s for 1.5 s: never idle for the timeout's length.
        for _ in 0..<15 {
            Thread.sleep(forTimeInterval: 0.1)
            #expect(try active.call("PING") == "+PONG\r\n")
        }
        #expect(idle.isClosedByServer())
        #expect(try active.call("PING") == "+PONG\r\n")
        #expect(server.stop() == 0)
    }

    @Test func clientsBeyondMaxClientsAreRefusedWithAnError() throws {
        let server = try LoopKVProcess(["--max-clients", "2"])
        let first = try server.connect()
        let second = try server.connect()
        #expect(try first.call("PING") == "+PONG\r\n")
        #expect(try second.call("PING") == "+PONG\r\n")
        let third = try server.connect()
        #expect(try third.readUntilClosed() == "-ERR max number of clients reached\r\n")
        #expect(try first.call("QUIT") == "+OK\r\n")
        #expect(first.isClosedByServer())
        // The slot is free again once the daemon has seen the close.
        var admitted = false
        for _ in 0..<50 where !admitted {
            let next = try server.connect()
            admitted = (try? next.call("PING")) == "+PONG\r\n"
            if !admitted { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(admitted)
        #expect(server.stop() == 0)
    }

    @Test func sigtermAnswersRequestsInFlightThenExitsZero() throws {
        let server = try LoopKVProcess()
        let client = try server.connect()
        var batch: [UInt8] = []
        for _ in 0..<2000 { batch += Array("*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n".utf8) }
        try client.send(batch)
        #expect(try client.readReply() == ":1\r\n")
        let idle = try server.connect()
        #expect(try idle.call("PING") == "+PONG\r\n")
        kill(server.process.processIdentifier, SIGTERM)
        // Every request the daemon read gets its reply before the close: consecutive counts.
        var expected = 2
        var rest = try client.readUntilClosed()
        while let end = rest.range(of: "\r\n") {
            #expect(rest[..<end.lowerBound] == ":\(expected)")
            expected += 1
            rest = String(rest[end.upperBound...])
        }
        #expect(rest.isEmpty)
        #expect(expected == 2001)
        #expect(idle.isClosedByServer())
        #expect(server.stop(signal: 0) == 0)
        #expect(server.log.contains("stopping"))
    }

    @Test func sigtermWithAPartialRequestClosesAndExitsZero() throws {
        let server = try LoopKVProcess()
        let client = try server.connect()
        try client.send(raw: "*2\r\n$3\r\nGET\r\n$5\r\nab")
        Thread.sleep(forTimeInterval: 0.1)
        #expect(server.stop(signal: SIGTERM) == 0)
        #expect(client.isClosedByServer())
    }

    @Test func sigintExitsZero() throws {
        let server = try LoopKVProcess()
        #expect(try server.connect().call("PING") == "+PONG\r\n")
        #expect(server.stop(signal: SIGINT) == 0)
    }

    /// A client that requested far more replies than the socket buffers hold and reads none:
    /// the drain cannot finish before the grace period is over.
    private func stuckReader(_ server: LoopKVProcess) throws -> RESPClient {
        let setter = try server.connect()
        #expect(try setter.call("SET", "big", String(repeating: "v", count: 512 * 1024)) == "+OK\r\n")
        let reader = try server.connect()
        var batch: [UInt8] = []
        for _ in 0..<200 { batch += Array("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".utf8) }
        try reader.send(batch)
        Thread.sleep(forTimeInterval: 0.3)
        return reader
    }

    @Test func aGracePeriodThatRunsOutClosesClientsThatDoNotReadAndExitsZero() throws {
        let server = try LoopKVProcess(["--shutdown-grace", "0.5"])
        let reader = try stuckReader(server)
        let started = Date()
        #expect(server.stop(signal: SIGTERM) == 0, "\(server.log.suffix(1500))")
        #expect(Date().timeIntervalSince(started) >= 0.5)
        #expect(server.log.contains("shutdown grace period over, closing remaining clients"))
        withExtendedLifetime(reader) {}
    }

    @Test func aSecondSignalDuringTheDrainChangesNothing() throws {
        let server = try LoopKVProcess(["--shutdown-grace", "1.5"])
        let reader = try stuckReader(server)
        kill(server.process.processIdentifier, SIGTERM)
        Thread.sleep(forTimeInterval: 0.3)
        // Still draining (the reader has not read), and a second SIGTERM and a SIGINT do not end
        // the process by their default action.
        #expect(server.process.isRunning)
        kill(server.process.processIdentifier, SIGTERM)
        #expect(server.stop(signal: SIGINT) == 0, "\(server.log.suffix(1500))")
        #expect(server.log.contains("shutdown grace period over"))
        withExtendedLifetime(reader) {}
    }

    @Test func aTakenPortFailsWithNonZeroExit() throws {
        let first = try LoopKVProcess()
        let second = Process()
        second.executableURL = LoopKVProcess.binary
        second.arguments = ["--port", "\(first.port)"]
        second.standardError = FileHandle.nullDevice
        try second.run()
        second.waitUntilExit()
        #expect(second.terminationStatus != 0)
        #expect(first.stop() == 0)
    }
}
