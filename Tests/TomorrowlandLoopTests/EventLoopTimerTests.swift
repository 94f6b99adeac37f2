import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop timers")
struct EventLoopTimerTests {
    @Test func timersWithEqualDeadlinesFireInSchedulingOrder() {
        // libevent fires equal deadlines in no fixed order; the loop's own heap must not.
        let loop = EventLoop()
        let log = Recorder<Int>()
        let deadline = MonotonicClock.now() + 5_000_000
        _ = loop.scheduleTimer(atDeadline: deadline - 1_000_000) { log.record(-1) }
        for index in 0..<200 {
            _ = loop.scheduleTimer(atDeadline: deadline) {
                log.record(index)
                if index == 199 { loop.stop() }
            }
        }
        let safety = loop.schedule(after: .seconds(10)) { loop.stop() }
        loop.run()
        safety.cancel()
        #expect(log.values == [-1] + Array(0..<200))
        loop.shutdown()
    }

    @Test func aTimerNeverFiresBeforeItsDelay() {
        let loop = EventLoop()
        let elapsed = Locked<Duration?>(nil)
        let start = ContinuousClock.now
        _ = loop.schedule(after: .milliseconds(50)) {
            elapsed.value = ContinuousClock.now - start
            loop.stop()
        }
        let safety = loop.schedule(after: .seconds(10)) { loop.stop() }
        loop.run()
        safety.cancel()
        let measured = elapsed.value
        #expect(measured != nil)
        if let measured {
            #expect(measured >= .milliseconds(50))
            #expect(measured < .seconds(5))
        }
        loop.shutdown()
    }

    @Test func cancellingOnTheLoopKeepsTheWorkFromRunningAndReleasesItAtOnce() {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let ran = Locked(false)
        let releasedAfterCancel = Locked(-1)
        loop.execute {
            let handle = loop.schedule(after: .zero) { [token = spy.token()] in
                withExtendedLifetime(token) { ran.value = true }
            }
            handle.cancel()
            releasedAfterCancel.value = spy.releasedCount
            handle.cancel()  // a second cancel does nothing
        }
        loop.runUntilIdle()
        loop.runUntilIdle()
        #expect(!ran.value)
        #expect(releasedAfterCancel.value == 1)
        loop.shutdown()
    }

    @Test func cancellingFromAnotherThreadKeepsTheWorkFromRunningAndReleasesIt() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let spy = ReleaseSpy()
        let ran = Locked(false)
        // The loop is held busy from before the timer is scheduled until after its deadline, so
        // the cancel always comes first, however late this thread gets a core, and the timer is
        // already due when the loop gets to it.
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        loop.execute {
            held.signal()
            release.wait()
        }
        held.wait()
        let handle = loop.schedule(after: .milliseconds(20)) { [token = spy.token()] in
            withExtendedLifetime(token) { ran.value = true }
        }
        handle.cancel()
        usleep(40_000)
        // Due after the cancelled timer: the loop would run that one first.
        let done = DispatchSemaphore(value: 0)
        _ = loop.schedule(after: .zero) { done.signal() }
        release.signal()
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        #expect(!ran.value)
        #expect(waitUntil { spy.releasedCount == 1 })
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func selfGuardedTimersRunOnTheLoopInSchedulingOrderWithOtherTimers() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            // Scheduled in one round with one delay: one deadline, so the order is scheduling order.
            _ = loop.schedule(after: .milliseconds(5)) { log.record("plain 1") }
            _ = loop.scheduleSelfGuarded(after: .milliseconds(5)) { log.record("guarded") }
            _ = loop.schedule(after: .milliseconds(5)) {
                log.record("plain 2")
                loop.stop()
            }
        }
        let safety = loop.schedule(after: .seconds(10)) { loop.stop() }
        loop.run()
        safety.cancel()
        #expect(log.values == ["plain 1", "guarded", "plain 2"])
        loop.shutdown()
    }

    @Test func cancellingSelfGuardedWorkOnTheLoopKeepsItFromRunningAndReleasesItAtOnce() {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let ran = Locked(false)
        let releasedAfterCancel = Locked(-1)
        loop.execute {
            let handle = loop.scheduleSelfGuarded(after: .zero) { [token = spy.token()] in
                withExtendedLifetime(token) { ran.value = true }
            }
            handle.cancel()
            releasedAfterCancel.value = spy.releasedCount
        }
        loop.runUntilIdle()
        loop.runUntilIdle()
        #expect(!ran.value)
        #expect(releasedAfterCancel.value == 1)
        loop.shutdown()
    }

    @Test func cancellingSelfGuardedWorkAfterItRanLeavesTheNextTimerInItsPlaceAlone() {
        // Self-guarded work never marks its handle as started, so the handle's cancel after the
        // run reaches the loop, with the ID of a timer that is gone; the timer that took its
        // place in the heap must not be removed.
        let loop = EventLoop()
        let log = Recorder<String>()
        let handle = Locked<(any PromiseScheduledWork)?>(nil)
        loop.execute {
            handle.value = loop.scheduleSelfGuarded(after: .zero) { log.record("guarded") }
        }
        loop.runUntilIdle()
        loop.execute {
            _ = loop.schedule(after: .zero) {
                log.record("next")
                loop.stop()
            }
            handle.value?.cancel()
        }
        let safety = loop.schedule(after: .seconds(10)) { loop.stop() }
        loop.run()
        safety.cancel()
        #expect(log.values == ["guarded", "next"])
        loop.shutdown()
    }

    @Test func shutdownReleasesPendingSelfGuardedWorkWithoutRunningIt() {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let ran = Locked(false)
        loop.execute {
            _ = loop.scheduleSelfGuarded(after: .seconds(60)) { [token = spy.token()] in
                withExtendedLifetime(token) { ran.value = true }
            }
        }
        loop.runUntilIdle()
        #expect(spy.releasedCount == 0)
        loop.shutdown()
        #expect(!ran.value)
        #expect(spy.releasedCount == 1)
    }

    @Test func aTimerAndWorkSubmittedFromAnotherThreadEachWakeABlockedLoop() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let log = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        // One at a time, each waited for, so that neither wakes the loop for the other. The loop
        // is blocked with no timer armed: the new timer must re-arm libevent's.
        _ = loop.schedule(after: .milliseconds(15)) {
            log.record("timer")
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        // Blocked again with nothing armed: the work must wake it.
        loop.execute {
            log.record("work")
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        #expect(log.values == ["timer", "work"])
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func timerWorkMayScheduleAndCancelOtherTimers() {
        let loop = EventLoop()
        let log = Recorder<String>()
        let later = LoopConfined<(any PromiseScheduledWork)?>(nil)
        loop.execute {
            later.value = loop.schedule(after: .milliseconds(40)) { log.record("cancelled one ran") }
            _ = loop.schedule(after: .milliseconds(5)) {
                log.record("first")
                later.value?.cancel()
                _ = loop.schedule(after: .milliseconds(5)) {
                    log.record("rescheduled")
                    loop.stop()
                }
            }
        }
        let safety = loop.schedule(after: .seconds(10)) { loop.stop() }
        loop.run()
        safety.cancel()
        #expect(log.values == ["first", "rescheduled"])
        loop.shutdown()
    }
}
