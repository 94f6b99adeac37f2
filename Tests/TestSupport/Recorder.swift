/// A thread-safe, append-only log that callbacks running on any thread write to.
///
/// Swift 6 test code cannot mutate captured variables from `@Sendable` callbacks; it records
/// into one of these instead and reads the log once the callbacks are known to have run (event
/// labels in the order work ran, values a callback received, the threads it ran on).
public final class Recorder<Element: Sendable>: Sendable {
    private let entries = Locked<[Element]>([])

    /// An empty log.
    public init() {}

    /// Appends `element` to the log.
    public func record(_ element: Element) {
        entries.withLock { $0.append(element) }
    }

    /// Everything recorded so far, in recording order.
    public var values: [Element] {
        entries.withLock { $0 }
    }

    /// How many elements were recorded so far.
    public var count: Int {
        entries.withLock { $0.count }
    }
}
