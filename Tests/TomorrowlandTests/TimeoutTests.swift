import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("timeout")
struct TimeoutTests {
    @Test func adoptsAValueThatArrivesBeforeTheDeadlineAndCancelsItsTimer() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: 5)
            #expect(loop.timerCount == 1)
            #expect(loop.nextTimerDeadline == .seconds(5))
            loop.advance(by: .seconds(4))
            resolver.fulfill(with: 42)
            #expect(loop.timerCount == 0)
            loop.run()
            #expect(timeout.result == .value(42))
        }
    }

    @Test func rejectsWithTimedOutExactlyAtTheDeadline() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: 5)
            loop.advance(by: .milliseconds(4_999))
            #expect(timeout.result == nil)
            loop.advance(by: .milliseconds(1))
            #expect(timeout.result == .error(.timedOut))
            // A late value changes nothing.
            resolver.fulfill(with: 1)
            loop.run()
            #expect(timeout.result == .error(.timedOut))
        }
    }

    @Test func wrapsAnUpstreamRejectionInRejected() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: 5)
            resolver.reject(with: "boom")
            loop.run()
            #expect(timeout.result == .error(.rejected("boom")))
        }
    }

    @Test func passesAnUpstreamCancellationThrough() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: 5)
            resolver.cancel()
            loop.run()
            #expect(timeout.result == .cancelled)
        }
    }

    @Test func theStdPromiseOverloadPassesRejectionsThroughUnchanged() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = StdPromise<Int>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: 5)
            #expect(type(of: timeout) == Promise<Int, Swift.Error>.self)
            resolver.reject(with: TimeTestError(code: 7))
            loop.run()
            #expect(timeout.result?.error as? TimeTestError == TimeTestError(code: 7))
        }
    }

    @Test("an upstream resolving after the timeout fired queues no work on the timeout's context")
    func anUpstreamResolvingAfterTheTimeoutQueuesNothing() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = StdPromise<Int>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: .seconds(1))
            loop.advance(by: .seconds(1))
            #expect(timeout.result?.error is PromiseTimeoutError<Swift.Error>)
            resolver.fulfill(with: 1)
            #expect(loop.readyCount == 0)
            #expect(timeout.result?.error is PromiseTimeoutError<Swift.Error>)
        }
    }

    @Test func theStdPromiseOverloadTimesOutWithPromiseTimeoutError() throws {
        try withTestLoop { loop in
            let (upstream, _) = StdPromise<Int>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: .seconds(2))
            loop.advance(by: .seconds(2))
            let error = try #require(timeout.result?.error as? PromiseTimeoutError<Swift.Error>)
            guard case .timedOut = error else {
                Issue.record("expected .timedOut, got \(error)")
                return
            }
        }
    }

    @Test func anAlreadyResolvedUpstreamGivesAnAlreadyResolvedPromiseWithTheDefaultContext() {
        let timeout = Promise<Int, String>(fulfilled: 3).timeout(delay: 10)
        #expect(timeout.result == .value(3))
    }

    @Test func anAlreadyResolvedUpstreamOnAnAsynchronousContextResolvesOnThatContext() throws {
        try withTestLoop { loop in
            let timeout = Promise<Int, String>(fulfilled: 3).timeout(on: .loop(loop), delay: 10)
            #expect(timeout.result == nil)
            #expect(loop.timerCount == 0)
            loop.run()
            #expect(timeout.result == .value(3))
        }
    }

    @Test func aZeroDelayOnImmediateTimesOutBeforeReturning() {
        let (upstream, _) = Promise<Int, String>.makeWithResolver()
        #expect(upstream.timeout(on: .immediate, delay: 0).result == .error(.timedOut))
        #expect(upstream.timeout(on: .nowOr(.utility), delay: -1).result == .error(.timedOut))
        #expect(upstream.timeout(on: .immediate, delay: .zero).result == .error(.timedOut))
    }

    @Test func aZeroDelayOnImmediateAdoptsAnAlreadyResolvedUpstream() {
        #expect(Promise<Int, String>(fulfilled: 1).timeout(on: .immediate, delay: 0).result == .value(1))
        #expect(Promise<Int, String>(rejected: "e").timeout(on: .immediate, delay: 0).result == .error(.rejected("e")))
    }

    @Test func aZeroDelayOnAnAsynchronousContextUsesNoTimerAndLetsAnEarlierResultWin() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: 0)
            #expect(timeout.result == nil)
            #expect(loop.timerCount == 0)
            #expect(loop.readyCount == 1)
            resolver.fulfill(with: 5)
            loop.run()
            #expect(timeout.result == .value(5))

            let (pending, _) = Promise<Int, String>.makeWithResolver()
            let late = pending.timeout(on: .loop(loop), delay: 0)
            loop.run()
            #expect(late.result == .error(.timedOut))
        }
    }

    @Test func firingSendsOneCancelRequestToAnUpstreamItAloneObserves() throws {
        try withTestLoop { loop in
            let requests = Recorder<String>()
            let (timeout, resolver) = sealedUpstream(requests: requests, cancels: true) {
                $0.timeout(on: .loop(loop), delay: 1)
            }
            loop.advance(by: .seconds(1))
            #expect(timeout.result == .error(.timedOut))
            #expect(requests.values == ["cancel requested"])
            withExtendedLifetime(resolver) {}
        }
    }

    @Test func firingDoesNotCancelAnUpstreamThatAnotherChildObserves() throws {
        try withTestLoop { loop in
            let requests = Recorder<String>()
            let ((timeout, other), resolver) = sealedUpstream(requests: requests, cancels: true) {
                ($0.timeout(on: .loop(loop), delay: 1), $0.map(on: .immediate) { $0 })
            }
            loop.advance(by: .seconds(1))
            #expect(timeout.result == .error(.timedOut))
            #expect(requests.values.isEmpty)
            withExtendedLifetime((other, resolver)) {}
        }
    }

    @Test func aCancelRequestPropagatesUpstreamOnceAndTheTimeoutThenFollowsTheUpstream() throws {
        try withTestLoop { loop in
            let requests = Recorder<String>()
            let (timeout, resolver) = sealedUpstream(requests: requests, cancels: true) {
                $0.timeout(on: .loop(loop), delay: 5)
            }
            timeout.requestCancel()
            #expect(requests.values == ["cancel requested"])
            // The timeout promise is cancelled by the upstream's cancellation, on its context.
            #expect(timeout.result == nil)
            loop.run()
            #expect(timeout.result == .cancelled)
            #expect(loop.timerCount == 0)
            withExtendedLifetime(resolver) {}
        }
    }

    @Test func aCancelRequestWithZeroDelayOnAnAsynchronousContextStillReachesTheUpstream() throws {
        try withTestLoop { loop in
            let requests = Recorder<String>()
            let (timeout, resolver) = sealedUpstream(requests: requests, cancels: false) {
                $0.timeout(on: .loop(loop), delay: 0)
            }
            timeout.requestCancel()
            loop.run()
            #expect(requests.values == ["cancel requested"])
            #expect(timeout.result == .error(.timedOut))
            withExtendedLifetime(resolver) {}
        }
    }

    @Test func theTimerIsDroppedWhenTheUpstreamResolvesSoNothingKeepsTheLoopBusy() throws {
        try withTestLoop { loop in
            var resolvers: [Promise<Int, String>.Resolver] = []
            var timeouts: [Promise<Int, PromiseTimeoutError<String>>] = []
            for _ in 0..<1_000 {
                let (promise, resolver) = Promise<Int, String>.makeWithResolver()
                resolvers.append(resolver)
                timeouts.append(promise.timeout(on: .loop(loop), delay: 3_600))
            }
            #expect(loop.timerCount == 1_000)
            for (index, resolver) in resolvers.enumerated() { resolver.fulfill(with: index) }
            #expect(loop.timerCount == 0)
            loop.run()
            #expect(timeouts.enumerated().allSatisfy { $0.element.result == .value($0.offset) })
        }
    }

    @Test func onAnOperationQueueTheTimeoutIsQueuedAtOnceAndDroppedWhenTheUpstreamResolves() {
        let queue = OperationQueue()
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .operationQueue(queue), delay: 60)
        #expect(queue.operationCount == 1)
        resolver.fulfill(with: 1)
        #expect(blockingResult(of: timeout) == .value(1))
        #expect(waitUntil { queue.operationCount == 0 })
    }

    @Test func onAnOperationQueueTheTimeoutFiresOnTheQueue() {
        let queue = OperationQueue()
        let (upstream, _) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .operationQueue(queue), delay: 0.02)
        #expect(blockingResult(of: timeout) == .error(.timedOut))
    }

    @Test func anUpstreamRacingTheTimerOnOtherThreadsGivesExactlyOneOutcome() {
        for index in 0..<300 {
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .utility, delay: 0.0001)
            DispatchQueue.global().async { resolver.fulfill(with: index) }
            let result = blockingResult(of: timeout)
            #expect(result == .value(index) || result == .error(.timedOut))
            // Whatever won, the result never changes afterwards.
            #expect(timeout.result == result)
        }
    }

    @Test func aTimeoutOnADispatchQueueFiresInRealTime() {
        let (upstream, _) = Promise<Int, String>.makeWithResolver()
        let start = DispatchTime.now()
        let timeout = upstream.timeout(on: .utility, delay: 0.05)
        #expect(blockingResult(of: timeout) == .error(.timedOut))
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(elapsed >= 0.05)
    }

    @Test func aTimeoutOnADispatchQueueDeliversAnEarlyValue() {
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .userInitiated, delay: 30)
        resolver.fulfill(with: 9)
        #expect(blockingResult(of: timeout) == .value(9))
    }
}
