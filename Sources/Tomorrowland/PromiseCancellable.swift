/// Requests cancellation of a promise without keeping it alive.
///
/// Obtained from ``Promise/cancellable``. After the promise's storage is gone,
/// ``requestCancel()`` does nothing.
public struct PromiseCancellable: Sendable {
    weak var target: (any PromiseCancelRequestable)?

    init(target: any PromiseCancelRequestable) {
        self.target = target
    }

    /// Requests cancellation of the promise, if it still exists.
    public func requestCancel() {
        target?.requestCancel()
    }
}
