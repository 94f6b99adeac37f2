import Synchronization
import Tomorrowland

/// The handle of a loop timer whose work must not start once `cancel()` has returned, whichever
/// thread called it: what `EventLoop` and `NIOEventLoopExecutor` return from
/// `schedule(after:_:)`, and from `scheduleSelfGuarded(after:_:)` when they cannot name the timer
/// at once. (A timer that needs no state of its own has a ``LoopTimerReference``.)
///
/// Three states: pending, started (the work claimed the handle with ``begin()``), cancelled.
/// ``cancel()`` claims the handle before anything else, so work that begins with ``begin()``
/// cannot start after it; the timer itself is then removed on the loop's thread: at once from
/// there, through a hop from anywhere else (``LoopTimerAccess``).
///
/// The loop is held without a count (`UnownedReference`), so that a timer's work, which holds
/// its handle, never keeps its loop alive; a cancel after the loop is gone has nothing to remove.
///
/// `@unchecked Sendable`: `state` is atomic; ``timerID`` is touched on the loop's thread only;
/// `loop` never changes.
package final class LoopTimerHandle<Access: LoopTimerAccess>: PromiseScheduledWork, @unchecked Sendable {
    private enum State: UInt8 {
        case pending = 0
        case started = 1
        case cancelled = 2
    }

    private let loop: UnownedReference<Access.Loop>
    private let state = Atomic<UInt8>(State.pending.rawValue)
    /// Where the timer is in the loop's timers, once inserted. On the loop's thread only
    /// (unchecked exclusivity: plain reads and writes, no user code in between).
    @exclusivity(unchecked) package var timerID: PromiseTimerID?

    /// A pending handle for a timer of `loop`.
    package init(loop: Access.Loop) {
        self.loop = UnownedReference(loop)
    }

    deinit {
        loop.release()
    }

    /// Whether neither the work started nor the handle was cancelled.
    package var isPending: Bool {
        state.load(ordering: .acquiring) == State.pending.rawValue
    }

    /// Whether ``cancel()`` (or ``markCancelled()``) claimed the handle before the work started:
    /// the work then never starts.
    package var wasCancelledBeforeStarting: Bool {
        state.load(ordering: .acquiring) == State.cancelled.rawValue
    }

    /// Marks the handle cancelled without a timer to remove (the loop refused the timer):
    /// ``cancel()`` then does nothing.
    package func markCancelled() {
        state.store(State.cancelled.rawValue, ordering: .releasing)
    }

    /// Claims the handle for the work about to run; `false` if it was cancelled first.
    package func begin() -> Bool {
        state.compareExchange(
            expected: State.pending.rawValue, desired: State.started.rawValue, ordering: .acquiringAndReleasing
        ).exchanged
    }

    /// Keeps the work from starting, if it has not, and has the loop remove the timer and release
    /// the work on its thread (at once when called there). Safe from any thread; idempotent.
    package func cancel() {
        guard
            state.compareExchange(
                expected: State.pending.rawValue, desired: State.cancelled.rawValue,
                ordering: .acquiringAndReleasing
            ).exchanged, let loop = loop.load()
        else { return }
        if Access.reachesTimers(of: loop) {
            removeTimer(from: loop)
            return
        }
        // The hop holds the handle, whose reference to the loop has no count: waiting in the
        // loop's own queue, it does not keep the loop alive.
        Access.hop(to: loop) { [self] in
            guard let loop = self.loop.load() else { return }
            removeTimer(from: loop)
        }
    }

    /// The timer's identifier, once: `nil` if the timer was never inserted or was already taken.
    /// On the loop's thread.
    package func takeTimerID() -> PromiseTimerID? {
        defer { timerID = nil }
        return timerID
    }

    /// Removes the timer from `loop`, if it was inserted and not removed yet. On the loop's thread.
    private func removeTimer(from loop: Access.Loop) {
        if let timerID = takeTimerID() { Access.removeTimer(timerID, from: loop) }
    }
}
