import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop promise forms")
struct EventLoopPromiseFormTests {
    @Test func runUntilReturnsTheResultOfAPromiseResolvedByLoopWork() {
        let loop = EventLoop()
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        _ = loop.schedule(after: .milliseconds(5)) { resolver.fulfill(with: 42) }
        #expect(loop.run(until: promise) == .value(42))
        loop.shutdown()
    }

    @Test func runUntilReturnsWhenAnotherThreadResolvesThePromise() {
        let loop = EventLoop()
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
            resolver.reject(with: "failed")
        }
        #expect(loop.run(until: promise) == .error("failed"))
        loop.shutdown()
    }

    @Test func runUntilIgnoresStopAndLeavesNoStopBehind() {
        let loop = EventLoop()
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        loop.execute { loop.stop() }
        _ = loop.schedule(after: .milliseconds(10)) { resolver.fulfill(with: 1) }
        #expect(loop.run(until: promise) == .value(1))
        // An already-resolved promise: one tick, and no sticky stop for the next run().
        #expect(loop.run(until: promise) == .value(1))
        let ranLater = Locked(false)
        _ = loop.schedule(after: .milliseconds(10)) {
            ranLater.value = true
            loop.stop()
        }
        loop.run()
        #expect(ranLater.value)
        loop.shutdown()
    }

    @Test func promiseCallbacksOnTheLoopContextRunOnTheLoop() {
        let loop = EventLoop()
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        let mapped = promise.map(on: .loop(loop)) { value -> Int in
            precondition(loop.inEventLoop)
            return value * 2
        }
        DispatchQueue.global().async { resolver.fulfill(with: 21) }
        #expect(loop.run(until: mapped) == .value(42))
        loop.shutdown()
    }

    @Test func sleepFulfilsAfterTheDelay() {
        let loop = EventLoop()
        let start = ContinuousClock.now
        let result = loop.run(until: loop.sleep(for: .milliseconds(30)))
        #expect(Outcome(result) == Outcome<NoError>.fulfilled)
        #expect(ContinuousClock.now - start >= .milliseconds(30))
        loop.shutdown()
    }

    @Test func cancellingASleepCancelsTheTimer() {
        let loop = EventLoop()
        let sleep = loop.sleep(for: .seconds(3600))
        sleep.requestCancel()
        #expect(Outcome(loop.run(until: sleep)) == Outcome<NoError>.cancelled)
        loop.shutdown()
    }

    @Test func shutdownCancelsAPendingSleep() {
        let loop = EventLoop()
        let sleep = loop.sleep(for: .seconds(3600))
        loop.shutdown()
        #expect(Outcome(sleep.result) == Outcome<NoError>.cancelled)
        #expect(Outcome(loop.sleep(for: .zero).result) == Outcome<NoError>.cancelled)
    }

    @Test func readableFulfilsOnceTheDescriptorHasData() {
        let loop = EventLoop()
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readable = loop.readable(descriptors[0])
        loop.runUntilIdle()
        #expect(Outcome(readable.result) == .pending)
        var byte: UInt8 = 1
        #expect(write(descriptors[1], &byte, 1) == 1)
        #expect(Outcome(loop.run(until: readable)) == .fulfilled)
        let writable = loop.writable(descriptors[1])
        #expect(Outcome(loop.run(until: writable)) == .fulfilled)
        loop.shutdown()
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test func readableOnAClosedDescriptorIsRejected() {
        let loop = EventLoop()
        let closed = unopenedDescriptor()
        let readable = loop.readable(closed)
        #expect(Outcome(readable.result) == .rejected(.invalidDescriptor(fd: closed, errno: EBADF)))
        loop.shutdown()
    }

    @Test func readableFromAnotherThreadWhileTheLoopRuns() {
        let loop = EventLoop()
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let done = DispatchSemaphore(value: 0)
        let onLoop = Locked(false)
        loop.readable(descriptors[0]).always(on: .loop(loop)) { _ in
            onLoop.value = loop.inEventLoop
            done.signal()
        }
        var byte: UInt8 = 1
        #expect(write(descriptors[1], &byte, 1) == 1)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(onLoop.value)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test func cancellingAReadablePromiseRemovesTheWatch() {
        let loop = EventLoop()
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readable = loop.readable(descriptors[0])
        #expect(loop.watchers.count == 1)
        readable.requestCancel()
        #expect(Outcome(readable.result) == .cancelled)
        #expect(loop.watchers.isEmpty)
        loop.shutdown()
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test func shutdownRejectsAPendingReadablePromise() {
        let loop = EventLoop()
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readable = loop.readable(descriptors[0])
        loop.shutdown()
        #expect(Outcome(readable.result) == .rejected(.shutDown))
        #expect(Outcome(loop.readable(descriptors[0]).result) == .rejected(.shutDown))
        close(descriptors[0])
        close(descriptors[1])
    }
}
