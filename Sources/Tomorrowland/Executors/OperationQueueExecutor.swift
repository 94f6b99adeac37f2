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

    /// Adds `work` to the queue once `delay` has passed (the timer runs on a serial Dispatch
    /// queue; the operation is enqueued when it fires).
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        let executor = self
        let scheduled = DispatchScheduledWork(work)
        Self.timerQueue.asyncAfter(deadline: .now() + delay.dispatchInterval) {
            executor.submit(scheduled.run)
        }
        return scheduled
    }

    /// Where timers fire. Serial, so that timers fire, and add their operations, in deadline
    /// order (on a global queue, equal delays reached a serial operation queue in any order:
    /// found by the executor contract suite).
    private static let timerQueue = DispatchQueue(
        label: "Tomorrowland.OperationQueueExecutor.timers", qos: .userInitiated)

    /// True while the calling thread runs work this library added to the same queue.
    public var isCurrent: Bool {
        ExecutionFlags.isRunning(on: queue)
    }
}
