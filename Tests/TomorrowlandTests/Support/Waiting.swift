import Dispatch
import Foundation

extension Duration {
    /// This duration in seconds, for Dispatch deadlines.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
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
