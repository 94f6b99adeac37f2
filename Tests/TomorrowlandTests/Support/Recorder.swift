import Foundation

// These helpers lock with `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on
// Linux, a contended `Mutex` hands the lock over inside the kernel (PI futex), which
// ThreadSanitizer does not see as synchronization, so it reports false data races on the data
// the mutex protects (checked with a four-thread probe on Swift 6.3.1). TSan intercepts pthread
// mutexes, so with `NSLock` a TSan run reports only real races.

/// A thread-safe, append-only log that callbacks running on any thread write to.
///
/// Swift 6 test code cannot mutate captured variables from `@Sendable` callbacks; it records
/// into one of these instead and reads the log once the callbacks are known to have run.
final class Recorder<Element: Sendable>: @unchecked Sendable {
    // Invariant: `entries` is only touched with `lock` held.
    private let lock = NSLock()
    private var entries: [Element] = []

    init() {}

    /// Appends `element` to the log.
    func record(_ element: Element) {
        lock.withLock { entries.append(element) }
    }

    /// Everything recorded so far, in recording order.
    var values: [Element] {
        lock.withLock { entries }
    }

    /// How many elements were recorded so far.
    var count: Int {
        lock.withLock { entries.count }
    }
}

/// A single thread-safe value, for flags and counters shared with callbacks.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // Invariant: `storage` is only touched with `lock` held.
    private let lock = NSLock()
    private var storage: Value

    init(_ value: Value) {
        storage = value
    }

    /// The current value.
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        lock.withLock { body(&storage) }
    }
}
