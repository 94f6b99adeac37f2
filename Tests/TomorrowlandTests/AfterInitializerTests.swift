import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("Promise(on:…after:)")
struct AfterInitializerTests {
    @Test func fulfilsExactlyAfterTheDelayOnTheContextsTimer() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop), fulfilled: 7, after: 5)
            #expect(loop.nextTimerDeadline == .seconds(5))
            loop.advance(by: .milliseconds(4_999))
            #expect(promise.result == nil)
            loop.advance(by: .milliseconds(1))
            #expect(promise.result == .value(7))
        }
    }

    @Test func rejectsOrResolvesWithAnyResultIncludingCancelled() throws {
        try withTestLoop { loop in
            let rejected = Promise<Int, String>(on: .loop(loop), rejected: "no", after: .seconds(1))
            let cancelled = Promise<Int, String>(on: .loop(loop), with: .cancelled, after: 2)
            let resolved = Promise<Int, String>(on: .loop(loop), with: .value(3), after: .seconds(3))
            loop.advance(by: .seconds(1))
            #expect(rejected.result == .error("no"))
            #expect(cancelled.result == nil)
            loop.advance(by: .seconds(1))
            #expect(cancelled.result == .cancelled)
            loop.advance(by: .seconds(1))
            #expect(resolved.result == .value(3))
        }
    }

    @available(*, deprecated, message: "exercises the deprecated spelling")
    @Test func theDeprecatedResultSpellingStillWorks() throws {
        try withTestLoop { loop in
            let promise = makeWithDeprecatedInitializer(loop)
            loop.advance(by: .seconds(1))
            #expect(promise.result == .value(1))
        }
    }

    @available(*, deprecated)
    private func makeWithDeprecatedInitializer(_ loop: TestLoop) -> Promise<Int, String> {
        Promise(on: .loop(loop), result: .value(1), after: 1)
    }

    @Test func aCancelRequestCancelsAtOnceAndStopsTheTimer() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop), fulfilled: 7, after: 60)
            promise.requestCancel()
            #expect(promise.result == .cancelled)
            #expect(loop.timerCount == 0)
        }
    }

    @Test func aCancelRequestReleasesTheValueLongBeforeTheDeadline() throws {
        try withTestLoop { loop in
            var payload: TimeTestPayload? = TimeTestPayload(1)
            let watch = WeakReference(payload!)
            let promise = Promise<TimeTestPayload, String>(on: .loop(loop), fulfilled: payload!, after: 60)
            payload = nil
            #expect(watch.object != nil)
            promise.requestCancel()
            #expect(watch.object == nil)
        }
    }

    @Test func aCancelRequestReleasesTheValueOnADispatchTimerToo() {
        var payload: TimeTestPayload? = TimeTestPayload(1)
        let watch = WeakReference(payload!)
        let promise = Promise<TimeTestPayload, String>(on: .utility, fulfilled: payload!, after: 1)
        payload = nil
        promise.requestCancel()
        // Checked at once, well before the 1 s deadline.
        #expect(watch.object == nil)
        #expect(promise.result?.isCancelled == true)
    }

    @Test func theTimerKeepsThePromiseAliveForItsCallbacks() throws {
        try withTestLoop { loop in
            let events = Recorder<String>()
            _ = Promise<Int, String>(on: .loop(loop), fulfilled: 1, after: 1).then(on: .immediate) { value in
                events.record("value \(value)")
            }
            loop.advance(by: .seconds(1))
            #expect(events.values == ["value 1"])
        }
    }

    @Test func immediateMeansTheAutoContextsExecutor() {
        // Off the main thread, `.auto` is `.default`: the timer is a Dispatch timer.
        let start = DispatchTime.now()
        let promise = Promise<Int, String>(on: .immediate, fulfilled: 1, after: 0.05)
        // Unresolved at once, unless this thread lost its core for the whole delay.
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(promise.result == nil || elapsed >= 0.05)
        #expect(blockingResult(of: promise) == .value(1))
    }

    @Test func nowOrMeansTheWrappedContext() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .nowOr(.loop(loop)), fulfilled: 1, after: 1)
            #expect(loop.timerCount == 1)
            loop.advance(by: .seconds(1))
            #expect(promise.result == .value(1))
        }
    }

    @Test func onAnOperationQueueTheOperationIsQueuedAtOnceAndKeepsItsPlaceInLine() {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let events = Recorder<String>()
        let promise = Promise<Int, String>(on: .operationQueue(queue), fulfilled: 1, after: 0.05)
        promise.tap(on: .immediate) { _ in events.record("promise") }
        queue.addOperation { events.record("added later") }
        #expect(queue.operationCount == 2)
        // Let the timer fire while the queue is held (its operation, queued first, turns ready),
        // then release the queue.
        #expect(waitUntil { queue.operations.first?.isReady == true })
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(events.values == ["promise", "added later"])
        #expect(promise.result == .value(1))
    }

    @Test func onAnOperationQueueCancellingDropsTheWaitingOperation() {
        let queue = OperationQueue()
        let promise = Promise<Int, String>(on: .operationQueue(queue), fulfilled: 1, after: 60)
        #expect(queue.operationCount == 1)
        promise.requestCancel()
        #expect(promise.result == .cancelled)
        #expect(waitUntil { queue.operationCount == 0 })
    }
}
