import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

@Suite struct FaultPlanTests {
    /// Every kind of fault the plan draws, often.
    static var everyFault: SimulatedFaultPlan {
        var plan = SimulatedFaultPlan()
        plan.resetInterval = .milliseconds(100)
        plan.partitionInterval = .milliseconds(300)
        plan.crashInterval = .seconds(1)
        plan.crashableHosts = ["server"]
        plan.restartDelay = .milliseconds(10) ... .milliseconds(200)
        plan.descriptorExhaustionInterval = .milliseconds(500)
        plan.unreachableInterval = .milliseconds(500)
        plan.nameFaultProbability = 0.1
        plan.lateNameDelay = .milliseconds(10) ... .milliseconds(500)
        return plan
    }

    struct Observed: Equatable {
        var echoed = 0
        var failed = 0
        var crashes = 0
        var restarts = 0
    }

    /// Three clients echo again and again for five seconds of virtual time under `plan`; the
    /// server's daemon is started again at each restart.
    static func world(seed: UInt64, plan: SimulatedFaultPlan) throws -> (SimulatedNetwork, Observed) {
        let network = SimulatedNetwork(seed: seed)
        let server = network.addHost("server")
        let clients = (0..<3).map { network.addHost("client\($0)") }
        _ = try startEchoServer(on: server)
        let observed = SimulatedBox(Observed())
        network.onHostCrash = { _ in observed.value.crashes += 1 }
        network.onHostRestart = { host in
            observed.value.restarts += 1
            _ = try? startEchoServer(on: host)
        }
        network.faultPlan = plan
        let stopAt = network.now + .seconds(5)
        for client in clients {
            echoRepeatedly(from: client, until: stopAt, network: network) { succeeded in
                if succeeded { observed.value.echoed += 1 } else { observed.value.failed += 1 }
            }
        }
        network.run(for: .seconds(5))
        network.faultPlan = .none
        #expect(network.runUntilIdle())
        return (network, observed.value)
    }

    @Test func thePlanInjectsEveryKindOfFaultAndRecordsAndCountsEach() throws {
        let (network, observed) = try Self.world(seed: 81, plan: Self.everyFault)
        let faults = network.trace.filter { $0.kind == .fault }.map(\.detail)
        for prefix in ["reset ", "partition ", "crash server", "descriptors exhausted on ", "name "] {
            #expect(faults.contains { $0.hasPrefix(prefix) }, "no \(prefix)fault")
        }
        #expect(faults.contains { $0.hasSuffix(" refuses connections") || $0.hasSuffix(" stops answering") })
        // What ends a fault is in the trace, not in the count.
        #expect(faults.contains("heal"))
        let ends = faults.filter { $0 == "heal" || $0.hasPrefix("descriptors back") || $0.hasSuffix("answers again") }
        #expect(network.faultCount == faults.count - ends.count)
        #expect(network.trace.contains { $0.kind == .restart })
        #expect(network.trace.contains { $0.kind == .acceptFailed })
        // The daemon was started again after each crash, and clients kept being served.
        #expect(observed.crashes > 0)
        #expect(observed.restarts == observed.crashes)
        #expect(observed.echoed > 0)
        #expect(observed.failed > 0)
    }

    @Test func theSameSeedInjectsTheSameFaultsAndDifferentSeedsOthers() throws {
        let first = try Self.world(seed: 82, plan: Self.everyFault)
        let second = try Self.world(seed: 82, plan: Self.everyFault)
        let other = try Self.world(seed: 83, plan: Self.everyFault)
        #expect(first.0.trace == second.0.trace)
        #expect(first.0.digest == second.0.digest)
        #expect(first.1 == second.1)
        #expect(first.0.digest != other.0.digest)
    }

    @Test func aSeedReplaysTheSameFaultsInAnotherProcessAndOpensNoDescriptorNorThread() throws {
        let first = try runProbe(seed: 5, faults: true)
        let second = try runProbe(seed: 5, faults: true)
        let other = try runProbe(seed: 6, faults: true)
        #expect(first == second)
        #expect((Int(first.faults) ?? 0) > 0)
        #expect(first.digest != other.digest)
        #expect(first.descriptorsBefore == first.descriptorsAfter)
        #expect(first.threadsBefore == first.threadsAfter)
    }

    @Test func noPlanInjectsNothing() throws {
        let (network, observed) = try Self.world(seed: 84, plan: .none)
        #expect(network.faultCount == 0)
        #expect(!network.trace.contains { $0.kind == .fault })
        #expect(observed.failed == 0)
        #expect(observed.echoed > 0)
    }

    @Test func replacingThePlanStopsItsDraws() throws {
        let network = SimulatedNetwork(seed: 85)
        _ = network.addHost("server")
        _ = network.addHost("client")
        var plan = SimulatedFaultPlan()
        plan.unreachableInterval = .milliseconds(10)
        network.faultPlan = plan
        network.run(for: .milliseconds(200))
        let count = network.faultCount
        #expect(count > 0)
        network.faultPlan = .none
        #expect(network.runUntilIdle())
        network.run(for: .seconds(1))
        #expect(network.faultCount == count)
        // Every host that stopped answering answers again.
        #expect(network.hosts.allSatisfy { $0.incomingConnections == .answered })
    }

    /// The replaced plan's next draws are dropped, not left to come as no-ops: with no fault under
    /// way, the network is idle at once, its clock where it was.
    @Test func aReplacedPlanLeavesNoDrawPending() throws {
        let network = SimulatedNetwork(seed: 86)
        _ = network.addHost("server")
        var plan = SimulatedFaultPlan()
        plan.crashInterval = .seconds(3600)
        plan.crashableHosts = ["server"]
        network.faultPlan = plan
        network.run(for: .milliseconds(10))
        network.faultPlan = .none
        #expect(network.runUntilIdle())
        #expect(network.now == .milliseconds(10))
        #expect(network.faultCount == 0)
    }
}

/// Echoes a short message from `client` to "server", again and again 10 ms apart until
/// `stopAt`, reporting each outcome.
func echoRepeatedly(
    from client: SimulatedHost, until stopAt: Duration, network: SimulatedNetwork,
    _ report: @escaping @Sendable (Bool) -> Void
) {
    guard network.now < stopAt else { return }
    echo(pattern(64), from: client).always(on: .loop(client.loop)) { result in
        report(result.value == pattern(64))
        _ = client.loop.schedule(after: .milliseconds(10)) {
            echoRepeatedly(from: client, until: stopAt, network: network, report)
        }
    }
}
