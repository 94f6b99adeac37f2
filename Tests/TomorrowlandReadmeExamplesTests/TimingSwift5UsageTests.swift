import Testing
import Tomorrowland

/// Tomorrowland-era code using the timing and combinator APIs (closures that mutate captured
/// variables, as Swift 5 code does) compiles in Swift 5 mode without a diagnostic, because the
/// APIs are `@preconcurrency`.
@Suite("Timing and combinator APIs from Swift 5 code")
struct TimingSwift5UsageTests {
    @Test func tomorrowlandEraCodeCompilesAndRuns() {
        var log: [String] = []
        let delayed = DelayedPromise<Int, String>(on: .immediate) { resolver in
            log.append("delayed handler")
            resolver.fulfill(with: 1)
        }
        let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
            log.append("operation handler")
            resolver.fulfill(with: 2)
        }
        operation.start()
        let all = when(fulfilled: [delayed.promise, operation.promise])
        let pair = when(fulfilled: delayed.promise, operation.promise.map(on: .immediate) { "\($0)" })
        let first = when(first: [operation.promise, delayed.promise], cancelRemaining: true)
        let timeout = delayed.promise.timeout(delay: 5)
        let retried = Promise<Int, String>.retry(on: .immediate, attempts: 3) { attempt in
            log.append("attempt \(attempt)")
            return attempt < 2 ? Promise(rejected: "again") : Promise(fulfilled: attempt)
        }
        #expect(log == ["operation handler", "delayed handler", "attempt 1", "attempt 2"])
        #expect(all.result == .value([1, 2]))
        #expect(pair.result?.value?.1 == "2")
        #expect(first.result == .value(2))
        #expect(timeout.result == .value(1))
        #expect(retried.result == .value(2))
    }
}
