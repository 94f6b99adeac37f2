import Foundation
import KeyValueSimulation
import Testing

/// The seeds the sweep runs: 1...200, or 1...N with `TOMORROWLAND_SIM_SEEDS=N` (the sanitizer
/// runs, ten times slower, sweep fewer; `make sim SEEDS=N` sweeps more in a release build).
private let sweepSeeds: ClosedRange<UInt64> = {
    let configured = ProcessInfo.processInfo.environment["TOMORROWLAND_SIM_SEEDS"].flatMap { UInt64($0) }
    return 1...max(1, configured ?? 200)
}()

/// loopkv's server on simulated networks: many seeds of a small world with faults, every reply
/// checked against the model (`make sim SEEDS=N` sweeps more).
@Suite struct KeyValueSimulationSweepTests {
    /// Seeds 1...200 (see `sweepSeeds`), each 10 clients × 100 commands under every kind of
    /// fault (`KeyValueWorld.Configuration.faultPlan`, and graceful restarts). A failure names its seed; `loopkv-sim --seed S` replays it.
    @Test(arguments: sweepSeeds)
    func everyReplyMatchesTheModel(seed: UInt64) {
        let outcome = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
        #expect(
            outcome.failure == nil, "seed \(seed): \(outcome.failure.map { "event \($0.event): \($0.message)" } ?? "")")
        #expect(outcome.commands == 1000)
        #expect(outcome.checked + outcome.lost == 1000)
    }

    @Test func theSameSeedGivesTheSameDigest() {
        for seed: UInt64 in [1, 2] {
            let first = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
            let second = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
            #expect(first.failure == nil)
            #expect(first.digest == second.digest)
            #expect(first.events == second.events)
        }
        let one = KeyValueWorld(.init(seed: 1, clients: 10, commands: 100)).run()
        let two = KeyValueWorld(.init(seed: 2, clients: 10, commands: 100)).run()
        #expect(one.digest != two.digest)
    }

    @Test func faultsHappenAndCommandsAreLostToThem() {
        var faults = 0
        var lost = 0
        for seed: UInt64 in 1...5 {
            let outcome = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
            faults += outcome.faults
            lost += outcome.lost
        }
        #expect(faults > 0)
        #expect(lost > 0)
    }

    /// Every kind of fault the world draws happens within the sweep's first seeds, each with the
    /// model holding through it: resets at either end, partitions, the server out of descriptors
    /// (its backlog filling), hosts refusing or ignoring connects, name faults, crashes and
    /// graceful restarts of the server (which lose the key space).
    @Test func everyKindOfFaultHappensWithinTheSweep() {
        let kinds: [(name: String, marks: [String])] = [
            ("reset of a server end", ["fault reset #", " server:"]),
            ("reset of a client end", ["fault reset #", " client"]),
            ("partition", ["fault partition "]),
            ("heal", ["fault heal"]),
            ("descriptor exhaustion", ["fault descriptors exhausted on server"]),
            ("an accept failing for want of descriptors", ["EMFILE"]),
            ("connects refused", ["refuses connections"]),
            ("connects unanswered", ["stops answering"]),
            ("name fault", ["fault name server "]),
            ("crash", ["fault crash server"]),
            ("graceful restart", ["action server exits"]),
            ("restart", ["restart server generation"]),
        ]
        var seen: Set<String> = []
        var serverRestarts = 0
        for seed: UInt64 in 1...10 {
            let outcome = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
            #expect(outcome.failure == nil, "seed \(seed): \(outcome.failure.map(\.message) ?? "")")
            serverRestarts += outcome.serverRestarts
            for line in outcome.faultLog {
                for kind in kinds where kind.marks.allSatisfy(line.contains) { seen.insert(kind.name) }
            }
        }
        #expect(
            Set(kinds.map(\.name)).subtracting(seen).isEmpty,
            "never happened: \(Set(kinds.map(\.name)).subtracting(seen))")
        #expect(serverRestarts > 0)
    }

    @Test func withoutFaultsEveryCommandIsAnswered() {
        let outcome = KeyValueWorld(.init(seed: 3, clients: 5, commands: 50, faults: false)).run()
        #expect(outcome.failure == nil)
        #expect(outcome.faults == 0)
        #expect(outcome.checked == 250)
    }
}
