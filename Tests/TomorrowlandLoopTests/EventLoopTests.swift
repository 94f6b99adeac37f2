import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop")
struct EventLoopTests {
    @Test func workSubmittedOnTheLoopRunsAfterTheCurrentTaskNeverReentrantly() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            log.record("first starts")
            loop.execute { log.record("submitted by first") }
            log.record("first ends")
        }
        loop.execute { log.record("second") }
        loop.runUntilIdle()
        #expect(log.values == ["first starts", "first ends", "second", "submitted by first"])
        loop.shutdown()
    }

    @Test func workSubmittedOnTheLoopRunsInTheSameTick() {
        // A chain of on-loop submissions completes within one runUntilIdle call, without I/O.
        let loop = EventLoop()
        let count = Locked(0)
        @Sendable func step(_ remaining: Int) {
            count.withLock { $0 += 1 }
            if remaining > 0 { loop.execute { step(remaining - 1) } }
        }
        loop.execute { step(9999) }
        loop.runUntilIdle()
        #expect(count.value == 10000)
        loop.shutdown()
    }

    @Test func inEventLoopIsTrueOnlyInsideTheLoopsWork() {
        let loop = EventLoop()
        let other = EventLoop()
        let inside = Recorder<Bool>()
        #expect(!loop.inEventLoop)
        loop.execute {
            inside.record(loop.inEventLoop)
            inside.record(loop.isCurrent)
            inside.record(other.inEventLoop)
        }
        loop.runUntilIdle()
        #expect(inside.values == [true, true, false])
        #expect(!loop.inEventLoop)
        loop.shutdown()
        other.shutdown()
    }

    @Test func stopFromInsideACallbackReturnsAfterThatTaskAndKeepsTheRestPending() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            log.record("stopper")
            loop.stop()
        }
        loop.execute { log.record("after") }
        loop.run()
        #expect(log.values == ["stopper"])
        loop.runUntilIdle()
        #expect(log.values == ["stopper", "after"])
        loop.shutdown()
    }

    @Test func stopFromAnotherThreadEndsRun() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func stopBeforeRunMakesTheNextRunReturnAfterOneTick() {
        let loop = EventLoop()
        let ran = Locked(false)
        loop.execute { ran.value = true }
        loop.stop()
        loop.run()
        #expect(ran.value)
        loop.shutdown()
    }

    @Test func runCanBeCalledAgainAfterStop() {
        let loop = EventLoop()
        for round in 0..<3 {
            let ran = Locked(-1)
            loop.execute {
                ran.value = round
                loop.stop()
            }
            loop.run()
            #expect(ran.value == round)
        }
        loop.shutdown()
    }

    @Test func runUntilIdleRunsDueTimersButNotLaterOnes() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            _ = loop.schedule(after: .zero) { log.record("due") }
            _ = loop.schedule(after: .seconds(3600)) { log.record("an hour out") }
        }
        // The zero-delay timer is due by the time the loop reads its clock again.
        loop.runUntilIdle()
        loop.runUntilIdle()
        #expect(log.values == ["due"])
        loop.shutdown()
    }

    @Test func runUntilIdleReturnsAtOnceWhenNothingIsPending() {
        let loop = EventLoop()
        let start = ContinuousClock.now
        loop.runUntilIdle()
        // Generous for a loaded machine; a loop that waited for events would never return.
        #expect(ContinuousClock.now - start < .seconds(10))
        loop.shutdown()
    }

    @Test func crossThreadWorkWakesABlockedLoop() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let done = DispatchSemaphore(value: 0)
        let onLoop = Locked(false)
        loop.execute {
            onLoop.value = loop.inEventLoop
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(onLoop.value)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func loopContextRunsPromiseExecutorWorkOnTheLoop() {
        let loop = EventLoop()
        let context = PromiseContext.loop(loop)
        guard case .executor(let executor) = context else {
            Issue.record("PromiseContext.loop(_:) is not .executor")
            return
        }
        #expect(executor === loop)
        let ran = Locked(false)
        executor.submit { ran.value = loop.inEventLoop }
        loop.runUntilIdle()
        #expect(ran.value)
        loop.shutdown()
    }

    @Test func jobsOfATaskPreferringTheLoopRunOnTheLoop() async {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let onLoop = await Task(executorPreference: loop) { loop.inEventLoop }.value
        #expect(onLoop)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }
}
