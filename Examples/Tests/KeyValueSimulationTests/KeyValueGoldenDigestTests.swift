import KeyValueSimulation
import Testing

/// Golden digests: the digests of loopkv's simulated world for seeds 1 to 10 (10 clients × 100
/// commands, every kind of fault), written down here.
///
/// `KeyValueSimulationSweepTests` proves that a seed replays the same within one build of the
/// code; these prove that a change to the library or to loopkv kept the run the same. A refactor
/// must leave every value below as it is: a different value means the simulated run took a
/// different order of events.
///
/// The rule: a change that alters a golden digest on purpose (a new trace line, a deliberate
/// change of order) updates the value here in the same commit, and says why in that commit's
/// message and in CHANGELOG.md.
@Suite struct KeyValueGoldenDigestTests {
    static let digests: [UInt64: String] = [
        1: "5f6438d10d27969e",
        2: "54d37b09b58d04e3",
        3: "7e5007a296cb9bd8",
        4: "318a62a7b0cb06a4",
        5: "f7b5c31def18034b",
        6: "f1b950bdc919d04d",
        7: "9debe8fdb3a54c7b",
        8: "54ec045ea7fd2251",
        9: "2c16209d3b77f2af",
        10: "49df05d5a70c0dc0",
    ]

    @Test(arguments: digests.keys.sorted())
    func aSeedReplaysItsGoldenDigest(seed: UInt64) {
        let outcome = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
        #expect(outcome.failure == nil, "seed \(seed): \(outcome.failure.map(\.message) ?? "")")
        #expect(outcome.digest == Self.digests[seed], "seed \(seed)")
    }
}
