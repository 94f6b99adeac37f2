import Synchronization

/// A thread-safe, append-only log that callbacks running on any thread write to.
///
/// Swift 6 test code cannot mutate captured variables from `@Sendable` callbacks; it records
/// into one of these instead and reads the log once the callbacks are known to have run.
final class Recorder<Element: Sendable>: Sendable {
    private let entries = Mutex<[Element]>([])

    init() {}

    /// Appends `element` to the log.
    func record(_ element: Element) {
        entries.withLock { $0.append(element) }
    }

    /// Everything recorded so far, in recording order.
    var values: [Element] {
        entries.withLock { $0 }
    }

    /// How many elements were recorded so far.
    var count: Int {
        entries.withLock { $0.count }
    }
}

/// A single thread-safe value, for flags and counters shared with callbacks.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    /// The current value.
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    func withLock<R: Sendable>(_ body: @Sendable (inout Value) -> R) -> R {
        storage.withLock { body(&$0) }
    }
}
