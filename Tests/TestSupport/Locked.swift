import Synchronization

/// A value behind the standard library's `Mutex`, shareable with callbacks on any thread: the one
/// lock of test code, here and in the Examples package's tests (every helper here, and tests' own
/// shared state, use it; a counter or a flag alone is an `Atomic`).
///
/// Why not the library's `LockedValue` (a pthread mutex, which ThreadSanitizer also sees): it is
/// `package`, so the Examples package cannot see it, and tests that hold it would depend on the
/// library's internals; this type is a `Sendable` value holder with no `@unchecked`.
///
/// Why an atomic beside the mutex: on Linux (Swift 6.3.1) a contended `Mutex` hands the lock over
/// inside the kernel (a futex), which ThreadSanitizer does not see as synchronization, so
/// `swift test --sanitize=thread` reports races on the very state the mutex protects (a probe of
/// four threads appending to a `Mutex<[Int]>`: right count, a TSan report on every run).
/// `withLock` therefore reads `handOver` with acquire at the start of each critical section and
/// bumps it with release at the end: the previous holder's release and the next holder's acquire
/// are atomic operations TSan instruments, so it sees the order the mutex already enforces (the
/// same probe through this type: no report in five runs). The two operations cost nothing a test
/// notices.
public final class Locked<Value: ~Copyable>: Sendable {
    private let mutex: Mutex<Value>
    /// Only for ThreadSanitizer's benefit: see the type's comment.
    private let handOver = Atomic<UInt>(0)

    /// A lock protecting `value`.
    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    ///
    /// - Important: `body` must not take the same lock again (it is not recursive).
    public func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in
            _ = handOver.load(ordering: .acquiring)
            defer { handOver.wrappingAdd(1, ordering: .releasing) }
            return try body(&value)
        }
    }
}

extension Locked where Value: Copyable & Sendable {
    /// The current value (read or replaced under the lock).
    public var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }
}
