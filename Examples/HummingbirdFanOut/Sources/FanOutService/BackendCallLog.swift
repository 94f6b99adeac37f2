import NIOConcurrencyHelpers

/// Every backend call's events, in the order they happened, with counts and a way to wait for one.
///
/// The service exposes it on `GET /stats` (counts per backend and kind) and logs each event; the
/// tests read it in-process to see that a client's hang-up reached the backends' cancel handlers.
/// Safe from any thread: events arrive on the NIO loops, readers are handler tasks and tests.
///
/// The lock is swift-nio's `NIOLockedValueBox`, a pthread mutex: the examples lock with pthread
/// mutexes, which ThreadSanitizer sees (loopkv's `PthreadMutex` says why not
/// `Synchronization.Mutex`); this package already builds on swift-nio, which provides one.
public final class BackendCallLog: Sendable {
    /// A task suspended in ``waitUntil(backend:kind:count:)``.
    private struct Waiter {
        let id: UInt64
        let backend: String
        let kind: BackendEvent.Kind
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var events: [BackendEvent] = []
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0

        func count(backend: String, kind: BackendEvent.Kind) -> Int {
            events.reduce(0) { $0 + ($1.backend == backend && $1.kind == kind ? 1 : 0) }
        }
    }

    private let state = NIOLockedValueBox(State())

    /// Makes an empty log.
    public init() {}

    /// Appends `event` and wakes the tasks waiting for it.
    public func record(_ event: BackendEvent) {
        let satisfied = state.withLockedValue { state -> [Waiter] in
            state.events.append(event)
            let (ready, waiting) = state.waiters.partitioned { waiter in
                state.count(backend: waiter.backend, kind: waiter.kind) >= waiter.count
            }
            state.waiters = waiting
            return ready
        }
        // Resumed outside the lock: a resumed task may read the log at once.
        for waiter in satisfied {
            waiter.continuation.resume()
        }
    }

    /// All events so far, in order.
    public var events: [BackendEvent] {
        state.withLockedValue { $0.events }
    }

    /// How many events of `kind` `backend` has had.
    public func count(backend: String, kind: BackendEvent.Kind) -> Int {
        state.withLockedValue { $0.count(backend: backend, kind: kind) }
    }

    /// Returns once `backend` has had `count` events of `kind` (at once if it has already), or
    /// once the calling task is cancelled, whichever comes first.
    ///
    /// - Returns: True when the events arrived, false when the wait was cancelled first.
    @discardableResult
    public func waitUntil(backend: String, kind: BackendEvent.Kind, count: Int = 1) async -> Bool {
        let id = state.withLockedValue { state -> UInt64 in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if state.count(backend: backend, kind: kind) >= count || Task.isCancelled {
                        return true
                    }
                    state.waiters.append(
                        Waiter(id: id, backend: backend, kind: kind, count: count, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLockedValue { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            cancelled?.continuation.resume()
        }
        return self.count(backend: backend, kind: kind) >= count
    }
}

extension Array {
    /// The elements that satisfy `predicate` and those that do not, each in their original order.
    fileprivate func partitioned(by predicate: (Element) -> Bool) -> (matching: [Element], rest: [Element]) {
        var matching: [Element] = []
        var rest: [Element] = []
        for element in self {
            if predicate(element) { matching.append(element) } else { rest.append(element) }
        }
        return (matching, rest)
    }
}
