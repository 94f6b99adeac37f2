import KeyValueSimulation
import Testing

/// loopkv's world under heavier faults than the sweep's: paced clients whose connections live
/// shorter than their think times, a server that restarts every 250 ms or so. The run must still
/// make progress and end, and its trace must name only what happened.
@Suite struct KeyValueSimulationLivenessTests {
    /// `loopkv-sim --seed 9020 --clients 30 --minutes 1 --fault-interval 10 --restart-interval 500`:
    /// a reset every 10 ms, a crash and a graceful restart every 500 ms on average, think times of
    /// 750 ms on average. A client whose connection is lost while it thinks must still send when
    /// its think time is over (on its next connection), and stop at its deadline, connected or not.
    @Test func pacedClientsMakeProgressWhenConnectionsLiveShorterThanTheirThinkTimes() {
        let outcome = KeyValueWorld(Self.heavy(seed: 9020)).run()
        #expect(outcome.failure == nil, "\(outcome.failure.map { "event \($0.event): \($0.message)" } ?? "")")
        // About 80 commands a client in a minute, at 1.25 commands a write; with every think time
        // restarted by a lost connection, 30 clients sent 243 in all.
        #expect(outcome.commands > 1000)
        #expect(outcome.checked + outcome.lost == outcome.commands)
        // Ended soon after the clients' deadline: the last think times, and the server's stop.
        #expect(outcome.virtualTime < .seconds(65))
    }

    /// Every graceful restart in the fault log is one SIGTERM to a running server, then one exit
    /// (loopkv's own handling: once the stop is done or its grace period is over), then the exit's
    /// crash, then the start again; a crash may come anywhere, and then the process's SIGTERM and
    /// exit are called off.
    @Test(arguments: [9020, 9001] as [UInt64])
    func theFaultLogNamesOnlyTheServerStepsThatHappened(seed: UInt64) {
        var configuration = Self.heavy(seed: seed)
        configuration.duration = .seconds(20)
        let outcome = KeyValueWorld(configuration).run()
        #expect(outcome.failure == nil, "\(outcome.failure.map { "event \($0.event): \($0.message)" } ?? "")")
        enum ServerState { case up, stopping, exited, down }
        var state = ServerState.up
        var gracefulRestarts = 0
        // The first line that does not follow from the ones before it.
        var untrue: String?
        for line in outcome.faultLog where untrue == nil {
            if line.hasSuffix(" action signal SIGTERM to server") {
                if state != .up { untrue = "a SIGTERM to a server that is \(state): \(line)" }
                state = .stopping
                gracefulRestarts += 1
            } else if line.hasSuffix(" action server exits") {
                if state != .stopping { untrue = "an exit of a server that is \(state): \(line)" }
                state = .exited
            } else if line.hasSuffix(" fault crash server") {
                if state == .down { untrue = "a crash of a server that is down: \(line)" }
                state = .down
            } else if line.hasSuffix(" action server starts again") {
                if state != .down { untrue = "a start of a server that is \(state): \(line)" }
            } else if line.contains(" restart server generation ") {
                if state != .down { untrue = "a restart of a server that is \(state): \(line)" }
                state = .up
            }
        }
        #expect(untrue == nil)
        #expect(gracefulRestarts > 5)
    }

    /// The heavier settings of issue 37: 30 paced clients for a minute, a reset every 10 ms, a
    /// crash and a graceful restart every 500 ms on average.
    private static func heavy(seed: UInt64) -> KeyValueWorld.Configuration {
        .init(
            seed: seed, clients: 30, duration: .seconds(60), faultInterval: .milliseconds(10),
            restartInterval: .milliseconds(500))
    }
}
