import Dispatch
import Foundation

/// Operation queues keep timed work in line (Tomorrowland's rule for `delay`, `timeout` and the
/// after-initializers on `.operationQueue(_:)`): the operation is added when the timer is
/// created and only becomes ready when the timer fires, so it goes before operations added
/// after it. The timer itself runs on `DispatchQueue.global(qos: .userInitiated)`, as in
/// Tomorrowland.
extension OperationQueueExecutor {
    /// Adds an operation to the queue at once that stays not ready until the timer fires (or is
    /// cancelled): timed work keeps its place in line.
    ///
    /// The timer itself runs on `DispatchQueue.global(qos: .userInitiated)`; the work runs on the
    /// queue, as an operation.
    public func reserveTimerSlot() -> (any PromiseTimerReservation)? {
        let operation = GatedOperation(queue: queue)
        queue.addOperation(operation)
        return OperationQueueTimerReservation(operation: operation)
    }
}

/// A place in an operation queue held for a timer.
final class OperationQueueTimerReservation: PromiseTimerReservation {
    let operation: GatedOperation

    init(operation: GatedOperation) {
        self.operation = operation
    }

    func arm(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        let operation = self.operation
        let item = DispatchWorkItem { operation.open(with: work) }
        DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: .now() + delay.dispatchInterval, execute: item)
        return OperationQueueTimerWork(item: item, operation: operation)
    }

    func cancel() {
        operation.cancel()
    }
}

/// Cancels both the timer and the waiting operation (which, cancelled, becomes ready and is
/// dropped by the queue without running anything).
///
/// `@unchecked Sendable`: `DispatchWorkItem.cancel()` is thread-safe, but corelibs Dispatch does
/// not declare the class `Sendable`.
struct OperationQueueTimerWork: PromiseScheduledWork, @unchecked Sendable {
    let item: DispatchWorkItem
    let operation: GatedOperation

    func cancel() {
        item.cancel()
        operation.cancel()
    }
}

/// An operation that waits, not ready, until it is given its work (or cancelled).
///
/// `@unchecked Sendable` as `Operation` is: `gate` is guarded by `lock`, `queue` is immutable.
final class GatedOperation: Operation, @unchecked Sendable {
    private struct Gate {
        var isOpen = false
        var work: (@Sendable () -> Void)?
    }

    private let lock = SpinLock()
    private var gate = Gate()
    /// The queue, for ``PromiseExecutor/isCurrent`` while the work runs.
    private let queue: OperationQueue

    /// Runs `body` on the gate under the lock (the core's ``SpinLock``, which ThreadSanitizer
    /// sees).
    private func withGate<R>(_ body: (inout Gate) -> R) -> R {
        lock.withLock { body(&gate) }
    }

    init(queue: OperationQueue) {
        self.queue = queue
        super.init()
    }

    /// Ready once opened or cancelled (and the inherited conditions, dependencies, hold).
    override var isReady: Bool {
        let isOpen = withGate { $0.isOpen }
        return (isOpen || isCancelled) && super.isReady
    }

    /// Gives the operation its work and makes it ready.
    func open(with work: @escaping @Sendable () -> Void) {
        let opened: Bool = withGate { gate in
            guard !gate.isOpen else { return false }
            gate.isOpen = true
            gate.work = work
            return true
        }
        guard opened else { return }
        willChangeValue(forKey: "isReady")
        didChangeValue(forKey: "isReady")
    }

    override func cancel() {
        super.cancel()
        // The work is released now; a cancelled operation is ready so that the queue drops it.
        let work = withGate { $0.work.take() }
        withExtendedLifetime(work) {}
        willChangeValue(forKey: "isReady")
        didChangeValue(forKey: "isReady")
    }

    override func main() {
        guard !isCancelled, let work = withGate({ $0.work.take() }) else { return }
        ExecutionFlags.running(on: queue, work)
    }
}
