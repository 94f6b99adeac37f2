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
        1: "6ea0b757a8eb5a1b",
        2: "d40ebea35923ec51",
        3: "99e6ea6af6c494dc",
        4: "0638003fe4a22853",
        5: "d02da1de7bff1d6f",
        6: "18b1dc6a302a8185",
        7: "3e235a7d4e72aa1f",
        8: "6809e7f3800b7c94",
        9: "006bf6e241b66d6e",
        10: "d99b6b58c28bdfa1",
    ]

    @Test(arguments: digests.keys.sorted())
    func aSeedReplaysItsGoldenDigest(seed: UInt64) {
        let outcome = KeyValueWorld(.init(seed: seed, clients: 10, commands: 100)).run()
        #expect(outcome.failure == nil, "seed \(seed): \(outcome.failure.map(\.message) ?? "")")
        #expect(outcome.digest == Self.digests[seed], "seed \(seed)")
    }
}
