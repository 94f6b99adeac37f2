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
        // Until the replies stop arriving: the kernel's buffers are then full and the daemon
        // holds the rest of its output, which the drain cannot flush. (The daemon writes while
        // it can; only a second without a byte, after the first came, says it can no longer.)
        let deadline = Date().addingTimeInterval(20)
        var arrived: Int32 = -1
        var unchangedSince = Date()
        while Date() < deadline {
            var available: Int32 = 0
            _ = ioctl(reader.fd, UInt(FIONREAD), &available)
            if available != arrived {
                arrived = available
                unchangedSince = Date()
            } else if available > 0, Date().timeIntervalSince(unchangedSince) >= 1 {
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(arrived > 0, "no reply reached the stuck reader")
        return reader
    }

    @Test func aSecondSignalDuringTheDrainChangesNothing() throws {
        // A grace period that a loaded machine cannot use up between the first signal's
        // handling and the checks below.
        let server = try LoopKVProcess(["--shutdown-grace", "3"])
        let reader = try stuckReader(server)
        kill(server.process.processIdentifier, SIGTERM)
        // Until the daemon handled the first signal, so that the next ones are separate deliveries.
        let deadline = Date().addingTimeInterval(20)
        while !server.log.contains("graceful shutdown: stopping"), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(server.log.contains("graceful shutdown: stopping"), "\(server.log.suffix(1500))")
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
