import Dispatch
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

/// The network caches each loop's next event time between steps: whatever gives a loop work
/// from outside its own turns must still make the loop run at its time.
@Suite struct SimulationSchedulingTests {
    @Test func workSubmittedBetweenStepsRunsAtTheNextStep() {
        let network = SimulatedNetwork(seed: 3)
        let host = network.addHost("a")
        network.run(for: .seconds(1))
        #expect(!network.step())
        let ran = SimulatedBox(false)
        host.loop.execute { ran.value = true }
        #expect(network.step())
        #expect(ran.value)
        #expect(network.now == .seconds(1))
    }

    @Test func aTimerScheduledFromAnotherThreadFiresOnVirtualTime() {
        let network = SimulatedNetwork(seed: 4)
        let host = network.addHost("a")
        // Asked once, idle: the network has it as idle until something wakes it.
        network.run(for: .seconds(1))
        let fired = SimulatedBox<Duration?>(nil)
        let loop = host.loop
        let scheduled = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = loop.schedule(after: .milliseconds(250)) { fired.value = loop.now }
            scheduled.signal()
        }
        scheduled.wait()
        #expect(network.runUntilIdle())
        #expect(fired.value == .milliseconds(1250))
    }

    @Test func oneLoopsWorkForAnotherLoopRunsInOrderOfTime() {
        let network = SimulatedNetwork(seed: 5)
        let first = network.addHost("first")
        let second = network.addHost("second")
        let names = SimulatedBox<[String]>([])
        let times = SimulatedBox<[Duration]>([])
        @Sendable func note(_ name: String, _ loop: EventLoop) {
            names.value.append(name)
            times.value.append(loop.now)
        }
        _ = first.loop.schedule(after: .milliseconds(10)) {
            note("first", first.loop)
            // Not on `second`'s turn: through its inbox, which must wake it.
            second.loop.execute { note("second", second.loop) }
            _ = second.loop.schedule(after: .milliseconds(5)) { note("second, later", second.loop) }
        }
        #expect(network.runUntilIdle())
        #expect(names.value == ["first", "second", "second, later"])
        #expect(times.value == [.milliseconds(10), .milliseconds(10), .milliseconds(15)])
    }
}

/// An action scheduled on the network's clock can be called off until it runs: then it neither
/// runs nor appears in the trace, which names only what happened.
@Suite struct ScheduledActionCancellationTests {
    @Test func aCancelledActionNeitherRunsNorAppearsInTheTrace() {
        let network = SimulatedNetwork(seed: 6)
        network.addHost("a")
        let ran = SimulatedBox<[String]>([])
        let timeout = network.schedule(after: .milliseconds(500), named: "timeout") { ran.value.append("timeout") }
        network.schedule(after: .milliseconds(100), named: "done first") {
            ran.value.append("done first")
            timeout.cancel()
        }
        let kept = network.schedule(at: .milliseconds(300), named: "kept") { ran.value.append("kept") }
        #expect(network.runUntilIdle())
        #expect(ran.value == ["done first", "kept"])
        // Idle once the kept action ran: the cancelled one no longer holds the network busy.
        #expect(network.now == .milliseconds(300))
        #expect(timeout.isCancelled)
        #expect(!kept.isCancelled)
        #expect(network.trace.filter { $0.kind == .action }.map(\.detail) == ["done first", "kept"])
    }

    @Test func cancellingAnActionThatRanChangesNothing() {
        let network = SimulatedNetwork(seed: 7)
        network.addHost("a")
        let ran = SimulatedBox(0)
        let action = network.schedule(after: .milliseconds(1), named: "once") { ran.value += 1 }
        network.run(for: .milliseconds(2))
        action.cancel()
        #expect(network.runUntilIdle())
        #expect(ran.value == 1)
        #expect(network.trace.filter { $0.kind == .action }.map(\.detail) == ["once"])
    }
}
