import Dispatch
import Foundation
import Synchronization
import Tomorrowland

/// The generous bound for anything that waits on another thread. Tests never sleep for
/// ordering; they wait for an event and fail if it does not come within this bound.
let generousTimeout: Duration = .seconds(20)

/// Claims a one-time event: the first `claim()` answers true, every later one false.
final class OneShot: Sendable {
    private let fired = Atomic<Bool>(false)

    /// True for exactly one caller.
    func claim() -> Bool {
        !fired.exchange(true, ordering: .acquiringAndReleasing)
    }
}

extension Duration {
    /// This duration in seconds, for Dispatch deadlines.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// Waits, without blocking a thread, until `promise` is resolved or `timeout` has passed, and
/// returns its result (`nil` if it timed out).
///
/// Observes with `tap(on: .immediate)`, which does not take part in cancellation propagation.
func waitForResult<Value, Failure>(
    _ promise: Promise<Value, Failure>, timeout: Duration = generousTimeout
) async -> PromiseResult<Value, Failure>? {
    let once = OneShot()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        promise.tap(on: .immediate) { _ in
            if once.claim() { continuation.resume() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) {
            if once.claim() { continuation.resume() }
        }
    }
    return promise.result
}

/// Waits, without blocking a thread, until everything submitted to the serial `queue` so far
/// has run.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async { continuation.resume() }
    }
}

/// Waits, without blocking a thread, until everything added to `queue` so far has run.
func drain(_ queue: OperationQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.addBarrierBlock { continuation.resume() }
    }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes; answers whether it
/// held. For events with no callback to wait on (a deinit on another thread).
func eventually(
    timeout: Duration = generousTimeout, _ condition: @Sendable () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Runs `body` on a new thread with the given stack size and waits, without blocking a thread,
/// until it returns. Used to prove that deep chains resolve in constant stack.
func runOnThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            body()
            continuation.resume()
        }
        thread.stackSize = stackSize
        thread.start()
    }
}
