import Dispatch
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("retry")
struct RetryTests {
    /// An attempt function that fails `failures` times, then succeeds with the attempt number,
    /// recording each start with the virtual time.
    private func flaky(
        failures: Int, loop: TestLoop, log: Recorder<String>
    ) -> @Sendable (Int) -> Promise<Int, String> {
        { attempt in
            log.record("attempt \(attempt) at \(loop.now)")
            return attempt <= failures ? Promise(rejected: "failure \(attempt)") : Promise(fulfilled: attempt)
        }
    }

    @Test func retriesAfterTheFixedBackoffUntilAnAttemptSucceeds() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let promise = Promise<Int, String>.retry(
                on: .loop(loop), attempts: 5, backoff: .fixed(.seconds(1)), flaky(failures: 2, loop: loop, log: log))
            loop.run()
            #expect(log.values == ["attempt 1 at 0.0 seconds"])
            loop.advance(by: .seconds(2))
            #expect(log.values == ["attempt 1 at 0.0 seconds", "attempt 2 at 1.0 seconds", "attempt 3 at 2.0 seconds"])
            #expect(promise.result == .value(3))
        }
    }

    @Test func rejectsWithTheLastErrorOnceTheAttemptsAreUsedUp() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let promise = Promise<Int, String>.retry(
                on: .loop(loop), attempts: 3, backoff: .fixed(.seconds(1)), flaky(failures: 10, loop: loop, log: log))
            loop.advance(by: .seconds(10))
            #expect(log.values.count == 3)
            #expect(promise.result == .error("failure 3"))
        }
    }

    @Test func oneAttemptMeansNoRetry() {
        let promise = Promise<Int, String>.retry(on: .immediate, attempts: 1) { _ in Promise(rejected: "once") }
        #expect(promise.result == .error("once"))
    }

    @Test func withoutBackoffAndOnImmediateTheAttemptsRunBeforeReturning() {
        let count = Atomic<Int>(0)
        let promise = Promise<Int, String>.retry(on: .immediate, attempts: 4) { attempt in
            count.add(1, ordering: .relaxed)
            return attempt < 4 ? Promise(rejected: "no") : Promise(fulfilled: attempt)
        }
        #expect(promise.result == .value(4))
        #expect(count.load(ordering: .relaxed) == 4)
    }

    @Test func theExponentialBackoffDoublesUpToItsCap() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let promise = Promise<Int, String>.retry(
                on: .loop(loop), attempts: 6,
                backoff: .exponential(initial: .milliseconds(100), maximum: .milliseconds(500)),
                flaky(failures: 10, loop: loop, log: log))
            loop.advance(by: .seconds(5))
            #expect(
                log.values == [
                    "attempt 1 at 0.0 seconds",
                    "attempt 2 at 0.1 seconds",
                    "attempt 3 at 0.3 seconds",
                    "attempt 4 at 0.7 seconds",
                    "attempt 5 at 1.2 seconds",
                    "attempt 6 at 1.7 seconds",
                ])
            #expect(promise.result == .error("failure 6"))
        }
    }

    @Test func backoffSchedules() {
        #expect(PromiseRetryBackoff.immediate.delay(afterAttempt: 3) == .zero)
        #expect(PromiseRetryBackoff.fixed(.seconds(2)).delay(afterAttempt: 9) == .seconds(2))
        let exponential = PromiseRetryBackoff.exponential(initial: .seconds(1), multiplier: 3, maximum: .seconds(20))
        #expect(exponential.delay(afterAttempt: 1) == .seconds(1))
        #expect(exponential.delay(afterAttempt: 2) == .seconds(3))
        #expect(exponential.delay(afterAttempt: 3) == .seconds(9))
        #expect(exponential.delay(afterAttempt: 4) == .seconds(20))
        #expect(exponential.delay(afterAttempt: 10_000) == .seconds(20))
    }

    @Test func shouldRetryCanStopEarly() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let promise = Promise<Int, String>.retry(
                on: .loop(loop), attempts: 5, backoff: .fixed(.seconds(1)),
                shouldRetry: { $0 != "failure 2" }, flaky(failures: 10, loop: loop, log: log))
            loop.advance(by: .seconds(10))
            #expect(log.values.count == 2)
            #expect(promise.result == .error("failure 2"))
        }
    }

    @Test func aCancelledAttemptEndsTheRetrying() throws {
        try withTestLoop { loop in
            let count = Atomic<Int>(0)
            let promise = Promise<Int, String>.retry(on: .loop(loop), attempts: 5) { _ in
                count.add(1, ordering: .relaxed)
                return Promise(with: .cancelled)
            }
            loop.run()
            #expect(promise.result == .cancelled)
            #expect(count.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aCancelRequestDuringTheWaitCancelsAtOnceAndStopsTheTimer() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let promise = Promise<Int, String>.retry(
                on: .loop(loop), attempts: 5, backoff: .fixed(.seconds(60)), flaky(failures: 10, loop: loop, log: log))
            loop.run()
            #expect(loop.timerCount == 1)
            promise.requestCancel()
            #expect(promise.result == .cancelled)
            #expect(loop.timerCount == 0)
            loop.advance(by: .seconds(120))
            #expect(log.values.count == 1)
        }
    }

    @Test func aCancelRequestDuringAnAttemptReachesThatAttemptAndNoOtherStarts() throws {
        try withTestLoop { loop in
            let requests = Recorder<String>()
            let count = Atomic<Int>(0)
            // The resolvers keep the attempts' storage alive, as the work behind them would.
            let resolvers = Recorder<UnsafeSendable<Promise<Int, String>.Resolver>>()
            let promise = Promise<Int, String>.retry(on: .loop(loop), attempts: 5, backoff: .fixed(.seconds(1))) {
                attempt in
                count.add(1, ordering: .relaxed)
                let (promise, resolver) = Promise<Int, String>.makeWithResolver()
                resolvers.record(UnsafeSendable(resolver))
                resolver.onRequestCancel(on: .immediate) { resolver in
                    requests.record("attempt \(attempt) cancel requested")
                    resolver.reject(with: "stopped")
                }
                return promise
            }
            loop.run()
            promise.requestCancel()
            #expect(requests.values == ["attempt 1 cancel requested"])
            loop.advance(by: .seconds(10))
            #expect(promise.result == .cancelled)
            #expect(count.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aValueThatArrivesDespiteACancelRequestIsKept() throws {
        try withTestLoop { loop in
            let slot = Locked<Promise<Int, String>.Resolver?>(nil)
            let promise = Promise<Int, String>.retry(on: .loop(loop), attempts: 3) { _ in
                let (attempt, resolver) = Promise<Int, String>.makeWithResolver()
                slot.withLock { $0 = resolver }
                return attempt
            }
            loop.run()
            promise.requestCancel()
            slot.withLock { $0?.fulfill(with: 8) }
            loop.run()
            #expect(promise.result == .value(8))
        }
    }

    @Test func retriesOnADispatchQueueInRealTime() {
        let count = Atomic<Int>(0)
        let promise = Promise<Int, String>.retry(on: .utility, attempts: 3, backoff: .fixed(.milliseconds(10))) {
            attempt in
            count.add(1, ordering: .relaxed)
            return attempt < 3 ? Promise(rejected: "no") : Promise(fulfilled: attempt)
        }
        #expect(blockingResult(of: promise) == .value(3))
        #expect(count.load(ordering: .relaxed) == 3)
    }

    @Test func zeroAttemptsIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            _ = Promise<Int, String>.retry(on: .immediate, attempts: 0) { _ in Promise(fulfilled: 1) }
        }
    }
}

@Suite("retry without a wait")
struct RetryWithoutWaitTests {
    @Test func manyAttemptsThatFailAtOnceDoNotNestOnTheStack() {
        let count = Atomic<Int>(0)
        let promise = Promise<Int, String>.retry(on: .immediate, attempts: 100_000) { attempt in
            count.add(1, ordering: .relaxed)
            return Promise(rejected: "failure \(attempt)")
        }
        #expect(promise.result == .error("failure 100000"))
        #expect(count.load(ordering: .relaxed) == 100_000)
    }
}
