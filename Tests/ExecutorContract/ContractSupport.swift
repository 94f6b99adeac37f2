import Foundation

// The helpers lock with `NSLock`: ThreadSanitizer sees pthread mutexes (not `Synchronization.Mutex`).

/// A thread-safe, append-only log.
final class ContractLog<Element: Sendable>: @unchecked Sendable {
    // Invariant: `entries` is only touched with `lock` held.
    private let lock = NSLock()
    private var entries: [Element] = []

    func record(_ element: Element) {
        lock.withLock { entries.append(element) }
    }

    var values: [Element] {
        lock.withLock { entries }
    }

    var count: Int {
        lock.withLock { entries.count }
    }
}

/// Something work captures, to tell whether the work was released.
final class ReleaseMarker: Sendable {}

/// A weak reference readable from any thread.
final class WeakMarker: @unchecked Sendable {
    // `weak let`: the runtime loads weak references atomically.
    weak let marker: ReleaseMarker?

    init(_ marker: ReleaseMarker) {
        self.marker = marker
    }

    var isReleased: Bool { marker == nil }
}

/// Runs `body` on a new thread and returns its result, waiting for it.
func onAnotherThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let result = ContractLog<T>()
    let done = DispatchSemaphore(value: 0)
    Thread {
        result.record(body())
        done.signal()
    }.start()
    done.wait()
    return result.values[0]
}

/// An error for rejections.
struct ContractError: Error, Equatable {}
