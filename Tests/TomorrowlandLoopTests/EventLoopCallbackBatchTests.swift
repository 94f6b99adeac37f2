import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// Callbacks of one resolution bound for one `EventLoop` reach it as one ready entry: on a real
/// loop, resolved on its thread or on another one, they keep their order and their place among
/// the loop's other work, and a shut-down loop releases them unrun.
@Suite("EventLoop: callbacks batched for the loop")
struct EventLoopCallbackBatchTests {
    @Test("taps resolved on the loop's thread run in order, between the work queued before and after")
    func tapsResolvedOnTheLoopKeepTheirPlace() {
        let loop = EventLoop()
        let log = Recorder<String>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        for index in 0..<4 {
            promise.tap(on: .loop(loop)) { result in log.record("tap \(index) \(result.value ?? -1)") }
        }
        let done = loop.submit { () -> Int in
            loop.execute { log.record("before") }
            resolver.fulfill(with: 5)
            log.record("resolved")
            loop.execute { log.record("after") }
            return 0
        }
        _ = loop.run(until: done)
        // The work queued after `done`'s body: the batch, then "after".
        _ = loop.run(until: loop.submit { 0 })
        #expect(
            log.values == ["resolved", "before", "tap 0 5", "tap 1 5", "tap 2 5", "tap 3 5", "after"])
        loop.shutdown()
    }

    @Test("taps resolved on another thread run in order between that thread's other submissions")
    func tapsResolvedOffTheLoopKeepTheirPlace() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let log = Recorder<String>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        for index in 0..<3 {
            promise.tap(on: .loop(loop)) { _ in log.record("tap \(index)") }
        }
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            loop.execute { log.record("before") }
            resolver.fulfill(with: 1)
            loop.execute {
                log.record("after")
                finished.signal()
            }
        }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(log.values == ["before", "tap 0", "tap 1", "tap 2", "after"])
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test("taps aimed at a shut-down loop from another thread are released without running")
    func tapsOnAShutDownLoopAreReleasedUnrun() {
        let loop = EventLoop()
        loop.shutdown()
        let spy = ReleaseSpy()
        let ran = Locked(0)
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        for _ in 0..<3 {
            promise.tap(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
        }
        let resolved = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            resolver.fulfill(with: 1)
            resolved.signal()
        }
        resolved.wait()
        #expect(ran.value == 0)
        #expect(spy.releasedCount == 3)
    }
}
