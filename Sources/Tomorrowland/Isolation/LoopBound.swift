/// A box that carries a value that is not `Sendable` across threads, while letting only code
/// running on one loop touch it.
///
/// The box itself is `Sendable`: capture it in `@Sendable` closures, store it in actors, pass it
/// around. Reading or writing ``value`` anywhere but inside the loop's work stops the program with
/// a precondition failure, so the value is only ever used by one thread at a time — the loop's —
/// without a lock.
///
/// ```swift
/// let loop = EventLoop()
/// let stats = LoopBound(RequestStats(), on: loop)   // a non-Sendable class; any thread
/// promise.then(on: .loop(loop)) { response in
///     stats.value.record(response)                   // on the loop: fine
/// }
/// ```
///
/// - Important: The value is destroyed where the last reference to the box goes, which may be
///   another thread. If its deinitializer must run on the loop, clear it there first (assign a
///   new value, or use an optional).
public final class LoopBound<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `storage` is read and written only after `executor.isCurrent` was
    // checked, that is, only by work the serial executor runs, one item at a time. Its
    // initial value is either sent in (`sending`: no one else holds it) or stored on the loop.
    private var storage: Value

    /// The loop whose work may use ``value``.
    public let executor: any SerialPromiseExecutor

    /// Boxes `value` for `executor`'s work; callable from any thread.
    ///
    /// `value` is `sending`: the caller gives it up, so nothing outside the box refers to it.
    public init(_ value: sending Value, on executor: some SerialPromiseExecutor) {
        storage = value
        self.executor = executor
    }

    /// Boxes `value`, which may be tied to other state of the loop; callable only on the loop.
    ///
    /// - Precondition: The calling thread runs `executor`'s work.
    public init(isolatedValue value: Value, on executor: some SerialPromiseExecutor) {
        executor.preconditionIsCurrent("LoopBound.init(isolatedValue:on:)")
        storage = value
        self.executor = executor
    }

    /// The value. Read and write it only in the loop's work.
    ///
    /// - Precondition: The calling thread runs ``executor``'s work.
    public var value: Value {
        get {
            executor.preconditionIsCurrent("LoopBound.value")
            return storage
        }
        set {
            executor.preconditionIsCurrent("LoopBound.value")
            storage = newValue
        }
    }

    /// Runs `body` with in-place access to the value, on the loop.
    ///
    /// - Precondition: The calling thread runs ``executor``'s work.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        executor.preconditionIsCurrent("LoopBound.withValue(_:)")
        return try body(&storage)
    }
}
