import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

/// `TestLoop.shutdown()` has the outcomes of `EventLoop.shutdown()`, in the same order: timers
/// released unrun, ready work drained, then closed; work that arrives after is refused with a
/// defined outcome (the same scenarios as `EventLoopLateWorkTests`).
@Suite("TestLoop: shutdown and work after it")
struct TestLoopShutdownTests {
    // MARK: - The shutdown itself

    @Test func shutdownReleasesTimersUnrunThenDrainsReadyWorkAndWhatItSubmitsThenCloses() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let spy = ReleaseSpy()
            _ = loop.schedule(after: .seconds(1)) { [token = spy.token { log.record("timer released") }] in
                withExtendedLifetime(token) { log.record("timer ran") }
            }
            loop.submit {
                log.record("A on loop: \(loop.isCurrent)")
                loop.submit { log.record("B, submitted by A") }
            }
            #expect(!loop.isShutdownComplete)
            loop.shutdown()
            #expect(log.values == ["timer released", "A on loop: true", "B, submitted by A"])
            #expect(loop.isShutdownComplete)
            #expect(loop.pendingWorkCount == 0)
            #expect(loop.now == .zero)
        }
    }

    @Test func timersScheduledByWorkDuringShutdownAreReleasedWithoutRunning() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit {
                _ = loop.schedule(after: .zero) { [token = ReleaseSpy().token { log.record("released") }] in
                    withExtendedLifetime(token) { log.record("timer ran") }
                }
                log.record("scheduled")
            }
            loop.submit { log.record("next item") }
            loop.shutdown()
            #expect(log.values == ["scheduled", "released", "next item"])
        }
    }

    @Test func promiseCallbacksAndTasksQueuedBeforeShutdownRunInItsDrain() async throws {
        try await withTestLoop { loop in
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let mapped = promise.map(on: .loop(loop)) { $0 + 1 }
            resolver.fulfill(with: 1)
            let task = Task(executorPreference: loop) { loop.isCurrent }
            loop.shutdown()
            #expect(mapped.result == .value(2))
            #expect(await task.value)
        }
    }

    @Test func shutdownCancelsWhatWaitsOnTheLoopsTimersAndTheirLoopCallbacksStillRun() throws {
        try withTestLoop { loop in
            let (upstream, upstreamResolver) = Promise<Int, Never>.makeWithResolver()
            let timedOut = upstream.timeout(on: .loop(loop), delay: .seconds(3600))
            let delayed = Promise<Int, Never>(fulfilled: 1).delay(on: .loop(loop), .seconds(3600))
            let later = Promise<Int, Never>(on: .loop(loop), fulfilled: 1, after: .seconds(3600))
            let retried = Promise<Int, String>.retry(
                on: .loop(loop), attempts: 3, backoff: .fixed(.seconds(3600))
            ) { _ in Promise(rejected: "no") }
            let seenOnLoop = Recorder<String>()
            timedOut.tap(on: .loop(loop)) { seenOnLoop.record("timeout cancelled: \($0.isCancelled)") }
            loop.run()  // arms the timers (the delay's once its upstream's callback ran)
            #expect(loop.timerCount == 4)
            loop.shutdown()
            #expect(timedOut.result?.isCancelled == true)
            #expect(delayed.result?.isCancelled == true)
            #expect(later.result?.isCancelled == true)
            #expect(retried.result?.isCancelled == true)
            #expect(seenOnLoop.values == ["timeout cancelled: true"])
            // The timeout's upstream resolving later changes nothing.
            upstreamResolver.fulfill(with: 2)
            #expect(timedOut.result?.isCancelled == true)
        }
    }

    @Test func shutdownFromInsideTheLoopsWorkFinishesTheItemDrainsAndEndsTheDrivingCall() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(2)) { log.record("timer ran") }
            loop.submit {
                log.record("A asks for shutdown")
                loop.shutdown()
                log.record("A goes on: shut down \(loop.isShutdownComplete)")
            }
            loop.submit { log.record("B") }
            loop.advance(by: .seconds(5))
            #expect(log.values == ["A asks for shutdown", "A goes on: shut down false", "B"])
            #expect(loop.isShutdownComplete)
            #expect(loop.now == .zero)
        }
    }

    @Test func runUntilAPromiseThatTheShutdownDrainResolvesReturnsItsResult() throws {
        try withTestLoop { loop in
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            loop.submit { loop.shutdown() }
            loop.submit { resolver.fulfill(with: 5) }
            let result = try loop.run(until: promise)
            #expect(result == .value(5))
        }
    }

    @Test func runUntilAPromiseLeftPendingByShutdownThrowsSayingSo() throws {
        try withTestLoop { loop in
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            loop.submit { loop.shutdown() }
            let failure = #expect(throws: TestLoopFailure.self) { try loop.run(until: promise) }
            #expect(failure?.description.contains("the loop is shut down") == true)
            _ = resolver
        }
    }

    @Test func shutdownAskedFromAnotherThreadWhileTheLoopIsDrivenHappensAfterTheCurrentItem() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit {
                DispatchQueue.global().sync { loop.shutdown() }
                log.record("A after the request: shut down \(loop.isShutdownComplete)")
            }
            loop.submit { log.record("B") }
            loop.run()
            #expect(log.values == ["A after the request: shut down false", "B"])
            #expect(loop.isShutdownComplete)
        }
    }

    @Test func workThatKeepsQueueingWorkIsRefusedAfterAThousandRounds() throws {
        try withTestLoop { loop in
            let ran = Locked(0)
            @Sendable func again() {
                ran.withLock { $0 += 1 }
                loop.submit(again)
            }
            loop.submit(again)
            loop.shutdown()
            #expect(ran.withLock { $0 } == 1000)
            #expect(loop.isShutdownComplete)
        }
    }

    @Test func shuttingDownTwiceDoesNothingTheSecondTime() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.shutdown()
            loop.submit { log.record("late") }
            loop.shutdown()
            #expect(log.values.isEmpty)
            #expect(loop.isShutdownComplete)
        }
    }

    // MARK: - Work after shutdown

    @Test func aMapOnAShutDownLoopEndsCancelledAndReleasesItsClosureUnrun() throws {
        try withTestLoop { loop in
            loop.shutdown()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let (otherPromise, otherResolver) = Promise<Int, Never>.makeWithResolver()
            let spy = ReleaseSpy()
            let ran = Locked(false)
            let mapped = promise.map(on: .loop(loop)) { [token = spy.token()] value -> Int in
                withExtendedLifetime(token) { ran.withLock { $0 = true } }
                return value + 1
            }
            let mappedElsewhere = otherPromise.map(on: .loop(loop)) { [token = spy.token()] value -> Int in
                withExtendedLifetime(token) { ran.withLock { $0 = true } }
                return value + 1
            }
            resolver.fulfill(with: 1)
            DispatchQueue.global().sync { otherResolver.fulfill(with: 1) }
            #expect(mapped.result?.isCancelled == true)
            #expect(mappedElsewhere.result?.isCancelled == true)
            #expect(!ran.withLock { $0 })
            #expect(spy.releasedCount == 2)
        }
    }

    @Test func tapAlwaysAndCatchObserversAimedAtAShutDownLoopAreReleasedWithoutRunning() throws {
        try withTestLoop { loop in
            let (promise, resolver) = Promise<Int, String>.makeWithResolver()
            let spy = ReleaseSpy()
            let ran = Locked(0)
            promise.tap(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
            let always = promise.always(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
            let caught = promise.catch(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
            loop.shutdown()
            resolver.reject(with: "late")
            #expect(always.result?.isCancelled == true)
            #expect(caught.result?.isCancelled == true)
            #expect(ran.withLock { $0 } == 0)
            #expect(spy.releasedCount == 3)
        }
    }

    @Test func longMapAndAlwaysChainsOnAShutDownLoopEndCancelledWithoutDeepRecursion() async {
        // In a child process: recursing once per link overflows the stack and crashes. A `map`
        // link passes a cancellation on without a job; an `always` link hands its executor a job
        // for every result, so each abandoned job cancels the next link's promise, which hands the
        // loop the next job from inside the refusal.
        await #expect(processExitsWith: .success) {
            let loop = TestLoop()
            loop.shutdown()
            let (head, resolver) = Promise<Int, Never>.makeWithResolver()
            var mapTail = head
            for _ in 0..<200_000 { mapTail = mapTail.map(on: .loop(loop)) { $0 &+ 1 } }
            var alwaysTail = head
            for _ in 0..<200_000 { alwaysTail = alwaysTail.always(on: .loop(loop)) { _ in } }
            resolver.fulfill(with: 0)
            precondition(mapTail.result?.isCancelled == true, "map: \(String(describing: mapTail.result))")
            precondition(alwaysTail.result?.isCancelled == true, "always: \(String(describing: alwaysTail.result))")
        }
    }

    @Test func submitAfterShutdownReleasesTheClosureWithoutRunningIt() throws {
        try withTestLoop { loop in
            loop.shutdown()
            let spy = ReleaseSpy()
            let ran = Locked(false)
            loop.submit { [token = spy.token()] in withExtendedLifetime(token) { ran.withLock { $0 = true } } }
            #expect(spy.releasedCount == 1)
            #expect(loop.readyCount == 0)
            loop.run()
            #expect(!ran.withLock { $0 })
        }
    }

    @Test func scheduleAfterShutdownReturnsAHandleWhoseWorkIsReleasedAtOnce() throws {
        try withTestLoop { loop in
            loop.shutdown()
            let spy = ReleaseSpy()
            let handle = loop.schedule(after: .zero) { [token = spy.token()] in withExtendedLifetime(token) {} }
            #expect(spy.releasedCount == 1)
            #expect(loop.timerCount == 0)
            handle.cancel()
        }
    }

    @Test func aTimeoutDelayOrAfterInitialiserArmedAfterShutdownEndsCancelled() throws {
        try withTestLoop { loop in
            loop.shutdown()
            let (upstream, resolver) = Promise<Int, Never>.makeWithResolver()
            let timedOut = upstream.timeout(on: .loop(loop), delay: .seconds(1))
            let zeroTimeout = upstream.timeout(on: .loop(loop), delay: .zero)
            let delayed = Promise<Int, Never>(fulfilled: 1).delay(on: .loop(loop), .seconds(1))
            let later = Promise<Int, Never>(on: .loop(loop), fulfilled: 1, after: .milliseconds(1))
            #expect(timedOut.result?.isCancelled == true)
            #expect(zeroTimeout.result?.isCancelled == true)
            #expect(delayed.result?.isCancelled == true)
            #expect(later.result?.isCancelled == true)
            _ = resolver
        }
    }

    @Test func aConcurrencyJobSubmittedAfterShutdownIsDropped() throws {
        try withTestLoop { loop in
            loop.shutdown()
            let started = Locked(false)
            _ = Task(executorPreference: loop) { started.withLock { $0 = true } }
            // The job is refused on the submitting thread, inside `Task.init`.
            #expect(loop.readyCount == 0)
            loop.run()
            #expect(!started.withLock { $0 })
        }
    }

    @Test func droppedClosuresAndJobsAreReportedWithOneLinePerLoop() async {
        let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = TestLoop()
            loop.shutdown()
            loop.submit {}
            _ = loop.schedule(after: .seconds(1)) {}
            _ = Task(executorPreference: loop) {}
        }
        let message = String(decoding: exit?.standardErrorContent ?? [], as: UTF8.self)
        let lines = message.split(separator: "\n").filter { $0.contains("after its shutdown") }
        #expect(lines.count == 1, "one diagnostic line per loop: \(message)")
    }

    @Test func drivingCallsAfterShutdownReturnAtOnceWithoutMovingTheClock() throws {
        try withTestLoop { loop in
            loop.advance(by: .seconds(1))
            loop.shutdown()
            loop.run()
            loop.advance(by: .seconds(5))
            loop.advance(to: .seconds(10))
            loop.runAll()
            #expect(loop.now == .seconds(1))
            let (pending, resolver) = Promise<Int, Never>.makeWithResolver()
            #expect(throws: TestLoopFailure.self) { try loop.run(until: pending) }
            let resolved = try loop.run(until: Promise<Int, Never>(fulfilled: 3))
            #expect(resolved == .value(3))
            _ = resolver
        }
    }
}
