import Dispatch

/// Requests cancellation of promises once objects they are tied to have been deallocated: the
/// Linux stand-in for Tomorrowland's associated-object hook behind
/// `requestCancelOnDeinit(_: AnyObject)`.
///
/// Entries hold the object and the promise weakly. A timer on a private utility queue sweeps the
/// entries every ``sweepInterval`` while there are any, and stops when there are none.
///
/// Its state is behind the library's lock for state (`LockedValue`), not the promise core's spin
/// lock: a sweep walks every entry, far beyond the few dozen instructions a spin lock's waiter may
/// burn waiting for.
public final class DeinitWatcher: Sendable {
    /// The watcher `requestCancelOnDeinit(_: AnyObject)` uses.
    public static let shared = DeinitWatcher()

    /// The longest time between an object's death and the cancel request: 10 ms.
    public static let sweepInterval: Duration = .milliseconds(10)

    private struct Entry: @unchecked Sendable {
        weak var object: AnyObject?
        let cancellable: PromiseCancellable
    }

    private struct State {
        var entries: [Entry] = []
        var timerArmed = false
    }

    private let state = LockedValue(State())
    private let queue = DispatchQueue(label: "Tomorrowland.DeinitWatcher", qos: .utility)

    private init() {}

    /// Requests cancellation through `cancellable` once `object` is deallocated.
    func watch(_ object: AnyObject, cancelling cancellable: PromiseCancellable) {
        // Only the weak reference's nil-ness is ever read, from any thread: that is thread-safe.
        let object = UnsafeTransfer(object)
        let arm: Bool = state.withLock { state in
            state.entries.append(Entry(object: object.wrapped, cancellable: cancellable))
            defer { state.timerArmed = true }
            return !state.timerArmed
        }
        if arm { scheduleSweep() }
    }

    /// The number of objects being watched (entries whose promise is still alive count until the
    /// next sweep).
    public var watchedCount: Int {
        state.withLock { $0.entries.count }
    }

    private func scheduleSweep() {
        queue.asyncAfter(deadline: .now() + Self.sweepInterval.dispatchInterval) { [self] in sweep() }
    }

    private func sweep() {
        let (dead, rearm): ([PromiseCancellable], Bool) = state.withLock { state in
            var dead: [PromiseCancellable] = []
            state.entries.removeAll { entry in
                if entry.object == nil {
                    dead.append(entry.cancellable)
                    return true
                }
                return entry.cancellable.target == nil
            }
            state.timerArmed = !state.entries.isEmpty
            return (dead, state.timerArmed)
        }
        for cancellable in dead {
            cancellable.requestCancel()
        }
        if rearm { scheduleSweep() }
    }
}
