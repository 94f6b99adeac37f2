import Foundation
import Testing

/// Signals and the binary's exit status: SIGINT, a second signal during the drain, a taken port.
/// Expiry, the idle timeout, max clients and the graceful shutdown's behaviour (replies in
/// flight, the grace period) are tested on simulation, at exact virtual instants
/// (`KeyValueServerSimulationTests`).
@Suite(.timeLimit(.minutes(2)))
struct LoopKVLifecycleTests {
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
