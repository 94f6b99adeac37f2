import Dispatch
import Tomorrowland

/// Blocks the calling thread until `promise` is resolved or `timeout` has passed, and returns its
/// result (`nil` if it timed out).
///
/// For tests that wait on a thread of their own, never a loop's (the loop could not resolve the
/// promise while its thread waits) and not in async code (use ``waitForResult(_:timeout:)``).
/// Observes with `tap(on: .immediate)`, which does not take part in cancellation propagation.
public func blockingResult<Value, Failure>(
    of promise: Promise<Value, Failure>, timeout: Duration = generousTimeout
) -> PromiseResult<Value, Failure>? {
    let resolved = DispatchSemaphore(value: 0)
    promise.tap(on: .immediate) { _ in resolved.signal() }
    let (seconds, attoseconds) = timeout.components
    let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    guard resolved.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
    return promise.result
}
