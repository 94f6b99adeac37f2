import Dispatch
import Synchronization
import Tomorrowland

/// Waits, without blocking a thread, until `promise` is resolved or `timeout` has passed, and
/// returns its result (`nil` if it timed out).
///
/// Observes with `tap(on: .immediate)`, which does not take part in cancellation propagation.
public func waitForResult<Value, Failure>(
    _ promise: Promise<Value, Failure>, timeout: Duration = generousTimeout
) async -> PromiseResult<Value, Failure>? {
    // The tap and the deadline race to resume the continuation; the first claim wins.
    let claimed = Atomic<Bool>(false)
    let (seconds, attoseconds) = timeout.components
    let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        promise.tap(on: .immediate) { _ in
            if !claimed.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            if !claimed.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume() }
        }
    }
    return promise.result
}
