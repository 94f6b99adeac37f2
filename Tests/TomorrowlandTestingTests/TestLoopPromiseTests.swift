import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

/// A promise fulfilled with `value` by a virtual timer `delay` after the loop runs its handler.
private func fulfilled(_ value: Int, after delay: Duration, on loop: TestLoop) -> Promise<Int, String> {
    Promise(on: .loop(loop)) { resolver in
        _ = loop.schedule(after: delay) { resolver.fulfill(with: value) }
    }
}

@Suite("TestLoop promise helpers")
struct TestLoopPromiseTests {
    @Test func runUntilAPromiseAdvancesThroughTimersAndFinishesTheRoundInWhichItResolves() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let promise = fulfilled(7, after: .seconds(5), on: loop)
            let mapped = promise.map(on: .loop(loop)) { value in
                log.record("mapped \(value)")
                return value * 2
            }
            _ = loop.schedule(after: .seconds(5)) { log.record("timer due with it") }
            _ = loop.schedule(after: .seconds(9)) { log.record("later timer") }
            let result = try loop.run(until: promise)
            #expect(result == .value(7))
            #expect(loop.now == .seconds(5))
            // As EventLoop finishes its tick: what was due at 5 s ran, the callback the
            // resolution queued included; the timer due at 9 s did not.
            #expect(log.values == ["timer due with it", "mapped 7"])
            #expect(loop.readyCount == 0)
            #expect(mapped.result == .value(14))
            #expect(loop.timerCount == 1)
            loop.runAll()
            #expect(log.values.last == "later timer")
        }
    }

    @Test func runUntilAnAlreadyResolvedPromiseRunsNothing() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit { log.record("ready") }
            let result = try loop.run(until: Promise<Int, String>(fulfilled: 1))
            #expect(result == .value(1))
            #expect(log.values.isEmpty)
            #expect(loop.readyCount == 1)
            loop.run()
        }
    }

    @Test func runUntilAPromiseTheLoopCanNeverResolveFailsSayingSo() throws {
        try withTestLoop { loop in
            let (promise, resolver) = Promise<Int, String>.makeWithResolver()
            _ = loop.schedule(after: .seconds(2)) {}
            let failure = #expect(throws: TestLoopFailure.self) { try loop.run(until: promise) }
            #expect(failure?.description.contains("can never resolve on this TestLoop") == true)
            #expect(failure?.description.contains("went idle at 2.0 seconds") == true)
            resolver.cancel()
        }
    }

    @Test func runUntilFailsAtTheTimeLimitAndLeavesTheClockThere() throws {
        try withTestLoop { loop in
            let promise = fulfilled(1, after: .seconds(10), on: loop)
            let failure = #expect(throws: TestLoopFailure.self) {
                try loop.run(until: promise, timeLimit: .seconds(4))
            }
            #expect(failure?.description.contains("did not resolve within 4.0 seconds") == true)
            #expect(failure?.description.contains("the next due at 10.0 seconds") == true)
            #expect(loop.now == .seconds(4))
            let result = try loop.run(until: promise)
            #expect(result == .value(1))
            #expect(loop.now == .seconds(10))
        }
    }

    @Test func runUntilFailsWhenWorkNeverGoesIdle() throws {
        try withTestLoop { loop in
            // A ticker that never stops: its next tick is still pending at the end.
            loop.expectPendingWorkAtEnd()
            let (promise, resolver) = Promise<Int, String>.makeWithResolver()
            @Sendable func tick() { _ = loop.schedule(after: .seconds(1)) { tick() } }
            tick()
            let failure = #expect(throws: TestLoopFailure.self) {
                try loop.run(until: promise, maxSteps: 50)
            }
            #expect(failure?.description.contains("within 50 steps") == true)
            #expect(loop.now == .seconds(50))
            resolver.cancel()
        }
    }

    @Test func expectValueReturnsTheValue() throws {
        try withTestLoop { loop in
            let value = try loop.expectValue(of: fulfilled(3, after: .milliseconds(1), on: loop))
            #expect(value == 3)
        }
    }

    @Test func expectValueNamesTheErrorThatHappenedInstead() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop)) { resolver in resolver.reject(with: "boom") }
            let failure = #expect(throws: TestLoopFailure.self) { try loop.expectValue(of: promise) }
            #expect(
                failure?.description
                    == "Expected the promise to be fulfilled with a value, but it was rejected with \"boom\" at 0.0 seconds"
            )
        }
    }

    @Test func expectValueNamesACancellation() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop)) { resolver in resolver.cancel() }
            let failure = #expect(throws: TestLoopFailure.self) { try loop.expectValue(of: promise) }
            #expect(failure?.description.contains("but it was cancelled") == true)
        }
    }

    @Test func expectErrorReturnsTheErrorAndNamesAValueInstead() throws {
        try withTestLoop { loop in
            let rejected = Promise<Int, String>(on: .loop(loop)) { resolver in resolver.reject(with: "boom") }
            let error = try loop.expectError(of: rejected)
            #expect(error == "boom")
            let failure = #expect(throws: TestLoopFailure.self) {
                try loop.expectError(of: fulfilled(42, after: .seconds(1), on: loop))
            }
            #expect(
                failure?.description
                    == "Expected the promise to be rejected with an error, but it was fulfilled with 42 at 1.0 seconds")
        }
    }

    @Test func expectCancellationPassesOnCancelAndNamesAnythingElse() throws {
        try withTestLoop { loop in
            let promise = fulfilled(5, after: .seconds(3), on: loop)
            _ = loop.schedule(after: .seconds(1)) { promise.requestCancel() }
            // `fulfilled` ignores cancel requests, so the value wins at 3 s.
            let failure = #expect(throws: TestLoopFailure.self) { try loop.expectCancellation(of: promise) }
            #expect(failure?.description.contains("but it was fulfilled with 5 at 3.0 seconds") == true)

            let cancellable = Promise<Int, String>(on: .loop(loop)) { resolver in
                let timer = loop.schedule(after: .seconds(10)) { resolver.fulfill(with: 1) }
                resolver.onRequestCancel(on: .loop(loop)) { resolver in
                    timer.cancel()
                    resolver.cancel()
                }
            }
            _ = loop.schedule(after: .seconds(1)) { cancellable.requestCancel() }
            try loop.expectCancellation(of: cancellable)
            #expect(loop.now == .seconds(4))
        }
    }

    @Test func expectationsFailClearlyWhenThePromiseNeverResolves() throws {
        try withTestLoop { loop in
            let (promise, resolver) = Promise<Int, String>.makeWithResolver()
            let failure = #expect(throws: TestLoopFailure.self) { try loop.expectValue(of: promise) }
            #expect(failure?.description.contains("can never resolve") == true)
            resolver.cancel()
        }
    }
}

extension TestLoopPromiseTests {
    /// The example in `TestLoop`'s documentation, kept compiling and true.
    @Test func theDocumentationExampleHolds() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop)) { resolver in
                _ = loop.schedule(after: .seconds(5)) { resolver.fulfill(with: 1) }
            }
            loop.advance(by: .seconds(4))
            #expect(promise.result == nil)
            loop.advance(by: .seconds(1))
            #expect(promise.result == .value(1))
        }
    }
}
