import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("delay")
struct DelayTests {
    @Test func theTimerStartsWhenTheUpstreamResolvesAndDeliversItsValueAfterTheDelay() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let delayed = upstream.delay(on: .loop(loop), 2)
            loop.advance(by: .seconds(10))
            #expect(loop.timerCount == 0)
            resolver.fulfill(with: 1)
            #expect(loop.nextTimerDeadline == .seconds(12))
            loop.advance(by: .milliseconds(1_999))
            #expect(delayed.result == nil)
            loop.advance(by: .milliseconds(1))
            #expect(delayed.result == .value(1))
        }
    }

    @Test func errorsAndCancellationsAreDelayedToo() throws {
        try withTestLoop { loop in
            let rejected = Promise<Int, String>(rejected: "e").delay(on: .loop(loop), .seconds(1))
            let cancelled = Promise<Int, String>(with: .cancelled).delay(on: .loop(loop), .seconds(1))
            #expect(rejected.result == nil)
            #expect(cancelled.result == nil)
            loop.advance(by: .seconds(1))
            #expect(rejected.result == .error("e"))
            #expect(cancelled.result == .cancelled)
        }
    }

    @Test func aCancelRequestDoesNotShortenTheWaitForAValue() throws {
        try withTestLoop { loop in
            let delayed = Promise<Int, String>(fulfilled: 4).delay(on: .loop(loop), 1)
            delayed.requestCancel()
            #expect(delayed.result == nil)
            loop.advance(by: .seconds(1))
            #expect(delayed.result == .value(4))
        }
    }

    @Test func aCancelledUpstreamWithAnEarlierCancelRequestSkipsTheWait() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let delayed = upstream.delay(on: .loop(loop), 5)
            delayed.requestCancel()
            resolver.cancel()
            #expect(delayed.result == .cancelled)
            #expect(loop.timerCount == 0)
        }
    }

    @Test func aCancelRequestAfterAnUpstreamCancellationSkipsTheRestOfTheWait() throws {
        try withTestLoop { loop in
            let delayed = Promise<Int, String>(with: .cancelled).delay(on: .loop(loop), 5)
            loop.advance(by: .seconds(2))
            #expect(delayed.result == nil)
            delayed.requestCancel()
            #expect(delayed.result == .cancelled)
            #expect(loop.timerCount == 0)
        }
    }

    @Test func anUpstreamCancellationWithoutARequestIsStillDelayed() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let delayed = upstream.delay(on: .loop(loop), 3)
            resolver.cancel()
            #expect(delayed.result == nil)
            loop.advance(by: .seconds(3))
            #expect(delayed.result == .cancelled)
        }
    }

    @Test func aCancelRequestPropagatesToTheUpstreamAsAnObserver() throws {
        try withTestLoop { loop in
            let requests = Recorder<String>()
            let (delayed, resolver) = sealedUpstream(requests: requests, cancels: true) {
                $0.delay(on: .loop(loop), 3)
            }
            delayed.requestCancel()
            #expect(requests.values == ["cancel requested"])
            // The upstream was cancelled after the request: no wait.
            #expect(delayed.result == .cancelled)
            withExtendedLifetime(resolver) {}
        }
    }

    @Test func callbacksOfTheDelayedPromiseRunAfterTheTimerOnTheirOwnContext() throws {
        try withTestLoop { loop in
            let events = Recorder<String>()
            let delayed = Promise<Int, String>(fulfilled: 1).delay(on: .loop(loop), 1)
            _ = delayed.then(on: .loop(loop)) { value in events.record("then \(value) at \(loop.now)") }
            loop.advance(by: .seconds(1))
            #expect(events.values == ["then 1 at 1.0 seconds"])
        }
    }

    @Test func onAnOperationQueueTheOperationIsQueuedWhenDelayIsCalled() {
        let queue = OperationQueue()
        queue.isSuspended = true
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let delayed = upstream.delay(on: .operationQueue(queue), 0.01)
        // Queued at once, before the upstream resolves and before the timer starts.
        #expect(queue.operationCount == 1)
        queue.addOperation {}
        resolver.fulfill(with: 6)
        queue.isSuspended = false
        #expect(blockingResult(of: delayed) == .value(6))
    }

    @Test func aDelayOnADispatchQueueWaitsInRealTime() {
        let start = DispatchTime.now()
        let delayed = Promise<Int, String>(fulfilled: 2).delay(on: .utility, 0.05)
        #expect(blockingResult(of: delayed) == .value(2))
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(elapsed >= 0.05)
    }
}
