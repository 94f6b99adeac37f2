import Dispatch
import Foundation

/// Runs promise work on an `OperationQueue`: the executor behind `.operationQueue(_:)`.
public final class OperationQueueExecutor: PromiseExecutor, @unchecked Sendable {
    // `OperationQueue` is thread-safe but not declared `Sendable` by corelibs Foundation.
    /// The queue work runs on.
    public let queue: OperationQueue

    /// An executor for `queue`.
    public init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Adds `work` to the queue as a block operation.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        let executor = self
        queue.addOperation { ExecutionFlags.running(on: executor.queue, work) }
    }

    /// Adds `work` to the queue once `delay` has passed (the timer runs on a Dispatch global
    /// queue; the operation is enqueued when it fires).
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        let executor = self
        let scheduled = DispatchScheduledWork(work)
        DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: .now() + delay.dispatchInterval) {
            executor.submit(scheduled.run)
        }
        return scheduled
    }

    /// True while the calling thread runs work this library added to the same queue.
    public var isCurrent: Bool {
        ExecutionFlags.isRunning(on: queue)
    }
}
