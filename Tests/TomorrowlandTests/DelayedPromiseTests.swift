import Dispatch
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("DelayedPromise")
struct DelayedPromiseTests {
    @Test func theHandlerRunsOnlyWhenThePromiseIsFirstAccessed() {
        let events = Recorder<String>()
        let delayed = DelayedPromise<Int, String>(on: .immediate) { resolver in
            events.record("handler, isExecutingNow \(PromiseContext.isExecutingNow)")
            resolver.fulfill(with: 1)
        }
        #expect(events.values.isEmpty)
        let promise = delayed.promise
        #expect(events.values == ["handler, isExecutingNow false"])
        #expect(promise.result == .value(1))
        _ = delayed.promise
        #expect(events.values.count == 1)
    }

    @Test func nowOrStartsTheHandlerAsynchronouslyOnTheWrappedContext() throws {
        try withTestLoop { loop in
            let events = Recorder<String>()
            let delayed = DelayedPromise<Int, String>(on: .nowOr(.loop(loop))) { resolver in
                events.record("handler")
                resolver.fulfill(with: 2)
            }
            let promise = delayed.promise
            #expect(events.values.isEmpty)
            loop.run()
            #expect(events.values == ["handler"])
            #expect(promise.result == .value(2))
        }
    }

    @Test func everyAccessReturnsTheSamePromiseAndCopiesAreEqual() {
        let delayed = DelayedPromise<Int, String>(on: .immediate) { _ in }
        let copy = delayed
        let other = DelayedPromise<Int, String>(on: .immediate) { _ in }
        #expect(delayed.promise == delayed.promise)
        #expect(delayed.promise == copy.promise)
        #expect(delayed == copy)
        #expect(delayed != other)
    }

    @Test func theHandlerIsReleasedAfterItRuns() {
        var payload: TimeTestPayload? = TimeTestPayload(1)
        let watch = WeakReference(payload!)
        let delayed = DelayedPromise<Int, String>(on: .immediate) { [payload] resolver in
            resolver.fulfill(with: payload!.number)
        }
        payload = nil
        #expect(watch.object != nil)
        #expect(delayed.promise.result == .value(1))
        #expect(watch.object == nil)
    }

    @Test func droppingAnUnaccessedDelayedPromiseReleasesTheHandlerWithoutRunningIt() {
        let events = Recorder<String>()
        var payload: TimeTestPayload? = TimeTestPayload(1)
        let watch = WeakReference(payload!)
        do {
            let delayed = DelayedPromise<Int, String>(on: .immediate) { [payload] _ in
                events.record("ran \(payload!.number)")
            }
            payload = nil
            #expect(watch.object != nil)
            withExtendedLifetime(delayed) {}
        }
        #expect(watch.object == nil)
        #expect(events.values.isEmpty)
    }

    @Test func theDelayedPromiseIsAHandleSoItKeepsThePromiseFromAutomaticCancellation() {
        let requests = Recorder<String>()
        let outcome = Recorder<String>()
        var delayed: DelayedPromise<Int, String>? = DelayedPromise(on: .immediate) { resolver in
            resolver.onRequestCancel(on: .immediate) { resolver in
                requests.record("cancel requested")
                resolver.cancel()
            }
        }
        let child = delayed!.promise.map(on: .immediate) { $0 }
        child.requestCancel()
        // Every observer asked, but the DelayedPromise still holds the promise.
        #expect(requests.values.isEmpty)
        delayed!.promise.tap(on: .immediate) { _ in outcome.record("resolved") }
        delayed = nil
        #expect(requests.values == ["cancel requested"])
        #expect(outcome.values == ["resolved"])
    }

    @Test func concurrentFirstAccessesRunTheHandlerOnce() {
        let runs = Atomic<Int>(0)
        for _ in 0..<200 {
            let delayed = DelayedPromise<Int, String>(on: .immediate) { resolver in
                runs.add(1, ordering: .relaxed)
                resolver.fulfill(with: 1)
            }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                // The winner runs the handler inline; the others may see it pending meanwhile.
                let result = delayed.promise.result
                #expect(result == .value(1) || result == nil)
            }
            #expect(delayed.promise.result == .value(1))
        }
        #expect(runs.load(ordering: .relaxed) == 200)
    }
}
