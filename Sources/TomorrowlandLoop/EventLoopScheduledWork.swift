import Synchronization
import Tomorrowland

/// The handle ``EventLoop/schedule(after:_:)`` returns: cancels one timer.
final class EventLoopScheduledWork: PromiseScheduledWork, @unchecked Sendable {
    // `@unchecked Sendable`: `state` is atomic; `timerID` is loop-confined (read and written only
    // by the thread driving `loop`); `loop` is immutable and thread-safe.

    private enum State: UInt8 {
        case pending = 0
        case started = 1
        case cancelled = 2
    }

    /// Not a strong reference, so that a timer's work (which holds this handle) never keeps its
    /// loop alive; not `weak`, which would slow every retain of the loop (see
    /// `UnownedReference`).
    private let loop: UnownedReference<EventLoop>
    private let state = Atomic<UInt8>(State.pending.rawValue)
    /// The timer in the loop's core, once scheduled there; loop-confined.
    @exclusivity(unchecked) var timerID: SchedulingCore.TimerID?

    init(loop: EventLoop) {
        self.loop = UnownedReference(loop)
    }

    deinit {
        loop.release()
    }

    /// Whether neither `begin()` nor `cancel()` has happened.
    var isPending: Bool {
        state.load(ordering: .acquiring) == State.pending.rawValue
    }

    /// Marks a timer that its loop refused (it was shut down) as cancelled: `cancel()` then does
    /// nothing.
    func markCancelled() {
        state.store(State.cancelled.rawValue, ordering: .releasing)
    }

    /// Claims the right to run the work; false if it was cancelled first.
    func begin() -> Bool {
        state.compareExchange(
            expected: State.pending.rawValue, desired: State.started.rawValue, ordering: .acquiringAndReleasing
        ).exchanged
    }

    /// Keeps the work from running if it has not started, and releases it (at once on the loop's
    /// thread, through a hop to the loop otherwise). Safe from any thread; idempotent.
    func cancel() {
        guard
            state.compareExchange(
                expected: State.pending.rawValue, desired: State.cancelled.rawValue, ordering: .acquiringAndReleasing
            ).exchanged, let loop = loop.load()
        else { return }
        if loop.inEventLoop {
            removeTimer(from: loop)
        } else {
            // After shutdown the timer is already gone, and there is nothing to do.
            _ = loop.enqueueIfOpen { [self, unowned loop] in removeTimer(from: loop) }
        }
    }

    /// On the loop's thread: removes the timer from the core, releasing its work.
    private func removeTimer(from loop: EventLoop) {
        guard let timerID else { return }
        self.timerID = nil
        loop.core.cancel(timerID)
    }
}
