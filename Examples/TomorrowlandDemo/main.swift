// The demo `make demo` runs: a small request fan-out on an EventLoop running on the main thread.
// It exercises the loop's timers, `when(fulfilled:)`, `timeout` (whose timer is a loop timer and
// whose expiry cancels the slow backend through automatic propagation), `retry` with backoff,
// and an invalidation token, then checks every outcome and exits non-zero if one is wrong.

import Foundation
import Tomorrowland
import TomorrowlandLoop

/// Why a fake backend call failed.
enum BackendError: Error, Sendable, CustomStringConvertible {
    case unavailable(String)

    var description: String {
        switch self {
        case .unavailable(let name): return "\(name) unavailable"
        }
    }
}

let loop = EventLoop()
let started = ContinuousClock.now

/// Prints `message` with the time since the demo started.
func log(_ message: String) {
    let elapsed = ContinuousClock.now - started
    let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    print(String(format: "[%6.1f ms] ", milliseconds) + message)
}

/// A fake backend call answered after `latency` by a loop timer. A cancel request releases the
/// timer and cancels the call, as a real client would close its socket.
func call(_ name: String, latency: Duration, failing: Bool = false) -> Promise<String, Swift.Error> {
    Promise(on: .loop(loop)) { resolver in
        log("\(name): request sent")
        let timer = loop.schedule(after: latency) {
            if failing {
                log("\(name): failed")
                resolver.reject(with: BackendError.unavailable(name))
            } else {
                log("\(name): answered")
                resolver.fulfill(with: "\(name) data")
            }
        }
        resolver.onRequestCancel(on: .loop(loop)) { resolver in
            timer.cancel()
            log("\(name): cancel requested, timer released")
            resolver.cancel()
        }
    }
}

// 1. Two calls in parallel, combined.
let page = when(fulfilled: [call("profile", latency: .milliseconds(30)), call("orders", latency: .milliseconds(50))])

// 2. A slow call guarded by a 100 ms timeout: the timeout fires first and, being the call's only
//    observer, its cancellation reaches the call.
let recommendations = call("recommendations", latency: .seconds(5))
    .timeout(on: .loop(loop), delay: .milliseconds(100))

// 3. A flaky call retried with exponential backoff: fails twice, then succeeds.
let attemptsMade = Counter()
let flaky = StdPromise<String>.retry(
    on: .loop(loop), attempts: 4, backoff: .exponential(initial: .milliseconds(20), maximum: .milliseconds(200))
) { attempt in
    attemptsMade.increment()
    return call("inventory (attempt \(attempt))", latency: .milliseconds(10), failing: attempt < 3)
}

// 4. A callback guarded by a token that is invalidated before the value arrives: it never runs.
let token = PromiseInvalidationToken()
let suppressedRan = Counter()
_ = call("analytics", latency: .milliseconds(40)).then(on: .loop(loop), token: token) { _ in
    suppressedRan.increment()
}
token.invalidate()

// The timeout's outcome as a value, so that `when` waits for it instead of failing with it.
let recommendationsOutcome: StdPromise<PromiseResult<String, Swift.Error>> =
    recommendations.mapResult(on: .loop(loop)) { .value($0) }
let everything = when(fulfilled: page, recommendationsOutcome, flaky)
let outcome = loop.run(until: everything)
// Let the analytics call finish, so that its suppressed callback would have had its chance.
_ = loop.run(until: loop.sleep(for: .milliseconds(20)))

let failures = Counter()
func check(_ condition: Bool, _ what: String) {
    log((condition ? "ok    " : "WRONG ") + what)
    if !condition { failures.increment() }
}

switch outcome {
case .value(let (pageParts, recommendationsResult, inventory)):
    check(pageParts == ["profile data", "orders data"], "when(fulfilled:) gave both parts in order: \(pageParts)")
    if case .error(let error as PromiseTimeoutError<Swift.Error>) = recommendationsResult, case .timedOut = error {
        check(true, "the slow call timed out after 100 ms")
    } else {
        check(false, "the slow call timed out (got \(recommendationsResult))")
    }
    check(inventory == "inventory (attempt 3) data", "retry succeeded on attempt 3: \(inventory)")
default:
    check(false, "all requests completed (got \(outcome))")
}
check(attemptsMade.value == 3, "retry made 3 attempts")
check(suppressedRan.value == 0, "the invalidated token suppressed its callback")

loop.shutdown()
if failures.value == 0 {
    log("demo finished: every outcome as expected")
} else {
    log("demo finished with \(failures.value) unexpected outcome(s)")
    exit(1)
}
