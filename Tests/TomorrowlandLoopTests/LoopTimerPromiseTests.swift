import Dispatch
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

/// The core's timer APIs on a real `EventLoop`: their timers are the loop's, and what they
/// deliver runs on the loop thread. (Virtual-time tests of the same APIs are in
/// TomorrowlandTests; these check the real loop in real time, with generous bounds.)
@Suite("Timers of promises on an EventLoop")
struct LoopTimerPromiseTests {
    private func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    @Test func aTimeoutFiresFromALoopTimerOnTheLoopThread() {
        let loop = EventLoop()
        let log = Recorder<String>()
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let start = DispatchTime.now()
        let timeout = upstream.timeout(on: .loop(loop), delay: 0.05)
        _ = timeout.always(on: .immediate) { result in
            log.record("\(result) on loop \(loop.inEventLoop)")
            loop.stop()
        }
        loop.run()
        #expect(log.values == ["error(Tomorrowland.PromiseTimeoutError<Swift.String>.timedOut) on loop true"])
        #expect(seconds(since: start) >= 0.05)
        // The timeout's callback on the upstream still delivers to the loop: let it, before the
        // loop shuts down.
        resolver.fulfill(with: 0)
        loop.runUntilIdle()
        loop.shutdown()
    }

    @Test func aTimeoutWhoseUpstreamResolvesFirstLeavesNoTimerBehind() {
        let loop = EventLoop()
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .loop(loop), delay: 3_600)
        resolver.fulfill(with: 1)
        // Runs the delivery; would block for an hour if the timer were still armed and `run`
        // were used, so the idle run is enough to see the result.
        loop.runUntilIdle()
        #expect(timeout.result == .value(1))
        loop.shutdown()
    }

    @Test func anAfterInitializerAndADelayFireInOrderOnTheLoop() {
        let loop = EventLoop()
        let log = Recorder<String>()
        let timer = Promise<String, String>(on: .loop(loop), fulfilled: "timer", after: .milliseconds(20))
        let delayed = Promise<String, String>(fulfilled: "delay").delay(on: .loop(loop), .milliseconds(40))
        _ = timer.then(on: .immediate) { value in log.record("\(value) \(loop.inEventLoop)") }
        _ = delayed.then(on: .immediate) { value in
            log.record("\(value) \(loop.inEventLoop)")
            loop.stop()
        }
        loop.run()
        #expect(log.values == ["timer true", "delay true"])
        loop.shutdown()
    }

    @Test func retryWaitsOnLoopTimers() {
        let loop = EventLoop()
        let attempts = Atomic<Int>(0)
        let start = DispatchTime.now()
        let promise = Promise<Int, String>.retry(on: .loop(loop), attempts: 3, backoff: .fixed(.milliseconds(10))) {
            attempt in
            attempts.add(1, ordering: .relaxed)
            return attempt < 3 ? Promise(rejected: "no") : Promise(fulfilled: attempt)
        }
        _ = promise.always(on: .immediate) { _ in loop.stop() }
        loop.run()
        #expect(promise.result == .value(3))
        #expect(attempts.load(ordering: .relaxed) == 3)
        #expect(seconds(since: start) >= 0.02)
        loop.shutdown()
    }
}
