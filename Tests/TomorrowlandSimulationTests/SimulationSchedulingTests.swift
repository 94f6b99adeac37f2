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
