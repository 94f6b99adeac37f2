/// A value behind a ``SpinLock``, with `Synchronization.Mutex`'s `withLock` shape.
///
/// For the package's own non-hot state and for tests: unlike `Mutex` (see ``SpinLock``),
/// ThreadSanitizer sees its synchronization, so TSan runs stay free of false reports.
///
/// - Important: `@unchecked Sendable`: `value` is only touched while holding `lock`.
package final class LockedValue<Value>: @unchecked Sendable {
    private let lock = SpinLock()
    private var value: Value

    /// A lock protecting `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}
