import Dispatch

/// Runs promise work on a Dispatch queue: the executor behind `.queue(_:)`, `.background`,
/// `.utility`, `.default`, `.userInitiated` and `.userInteractive`.
///
/// Work runs with `queue.async`, timers with `queue.asyncAfter` on Dispatch's monotonic clock.
public final class DispatchQueueExecutor: PromiseExecutor {
    /// The queue work runs on.
    public let queue: DispatchQueue

    /// An executor for `queue`.
    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    static let background = DispatchQueueExecutor(queue: .global(qos: .background))
    static let utility = DispatchQueueExecutor(queue: .global(qos: .utility))
    static let `default` = DispatchQueueExecutor(queue: .global(qos: .default))
    static let userInitiated = DispatchQueueExecutor(queue: .global(qos: .userInitiated))
    static let userInteractive = DispatchQueueExecutor(queue: .global(qos: .userInteractive))

    /// Runs `work` with `queue.async`.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        let queue = self.queue
        queue.async { ExecutionFlags.running(on: queue, work) }
    }

    /// Runs `work` on the queue once `delay` has passed, with `queue.asyncAfter`.
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        let queue = self.queue
        let scheduled = DispatchScheduledWork(work)
        queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { ExecutionFlags.running(on: queue, scheduled.run) }
        return scheduled
    }

    /// True while the calling thread runs work this library submitted to the same queue.
    ///
    /// Work the queue runs for others is not recognised (the answer is then `false`).
    public var isCurrent: Bool {
        ExecutionFlags.isRunning(on: queue)
    }
}

/// Work scheduled with `asyncAfter` on a Dispatch queue; cancelling drops and releases it.
///
/// Not a cancelled `DispatchWorkItem`: Dispatch keeps a cancelled item's block, and what it
/// captured, until the deadline passes (found by the executor contract suite, which checks that
/// `cancel()` releases the work). The block Dispatch holds refers to this box only.
///
/// `@unchecked Sendable`: `work` is only touched while holding `lock`.
final class DispatchScheduledWork: PromiseScheduledWork, @unchecked Sendable {
    private let lock = SpinLock()
    private var work: (@Sendable () -> Void)?

    init(_ work: @escaping @Sendable () -> Void) {
        self.work = work
    }

    /// Runs the work, on the queue, unless it was cancelled.
    func run() {
        take()?()
    }

    func cancel() {
        // Released here, outside the lock.
        _ = take()
    }

    private func take() -> (@Sendable () -> Void)? {
        // lock()/unlock(): a closure returned through withLock's generic result is reabstracted
        // (an allocation).
        lock.lock()
        let taken = work
        work = nil
        lock.unlock()
        return taken
    }
}

extension Duration {
    /// This duration as a Dispatch interval, rounded to nanoseconds and clamped at zero.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return .nanoseconds(0) }
        if seconds >= Int64(Int.max / 1_000_000_000) { return .never }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
