import Testing
import TomorrowlandSimulation

/// Golden digests: the trace digests of a few fixed simulated worlds, written down here.
///
/// The other digest tests prove that a seed replays the same within one build of the code; these
/// prove that a change to the code kept the run the same. A refactor of the loops, of the
/// simulation's event queue or of the ways work reaches a loop must leave every value below as it
/// is: a different value means the simulated run took a different order of events.
///
/// The rule: a change that alters a golden digest on purpose (a new trace line, a deliberate
/// change of order) updates the value here in the same commit, and says why in that commit's
/// message and in CHANGELOG.md.
@Suite struct GoldenDigestTests {
    /// The echo world of `runEchoWorld` (one server, four clients, random messages), no faults.
    static let echoDigests: [UInt64: String] = [
        1: "720df6263fc4ebf5",
        2: "fa2b6751b898412e",
        3: "f015ecaabc965577",
        4: "f70f8e583fcefac2",
        5: "513a40cabdde873c",
    ]

    /// The echo world of `FaultPlanTests.world` under `FaultPlanTests.everyFault`: resets,
    /// partitions, crashes and restarts of the server, descriptor exhaustion, name faults.
    static let faultyEchoDigests: [UInt64: String] = [
        1: "f6c54f12d1d5230e",
        2: "3c6e40ed7f3ec236",
        3: "6bbab088bf0babbc",
        4: "7f842a0bd1d6a6e0",
        5: "650e6e6e8bf8463f",
    ]

    @Test(arguments: echoDigests.keys.sorted())
    func anEchoWorldReplaysItsGoldenDigest(seed: UInt64) throws {
        let (network, intact) = try runEchoWorld(seed: seed)
        #expect(intact)
        #expect(network.digestHex == Self.echoDigests[seed], "seed \(seed)")
    }

    @Test(arguments: faultyEchoDigests.keys.sorted())
    func anEchoWorldUnderEveryFaultReplaysItsGoldenDigest(seed: UInt64) throws {
        let (network, _) = try FaultPlanTests.world(seed: seed, plan: FaultPlanTests.everyFault)
        #expect(network.faultCount > 0)
        #expect(network.digestHex == Self.faultyEchoDigests[seed], "seed \(seed)")
    }
}
