import Synchronization
import Tomorrowland

/// How a kind of loop that keeps timers named by ``LoopTimerHandle``s removes one: `EventLoop`'s
/// and `NIOEventLoopExecutor`'s.
///
/// A type of its own (an internal enum in the loop's module), not a conformance of the loop: a
/// public class's conformance to a protocol of this module would have to be public, and this
/// module is imported `package` or `internal` only.
package protocol LoopTimerRemoval {
    /// The loop that holds the timers.
    associatedtype Loop: AnyObject & Sendable

    /// Removes the timer of `handle` (``LoopTimerHandle/takeTimerID()``) from `loop` and releases
    /// its work on the loop's thread: at once when called there, through a hop from another
    /// thread. Does nothing once the loop has shut down (it released every timer then).
    static func removeTimer(of handle: LoopTimerHandle<Self>, from loop: Loop)
}

/// The handle of a loop timer whose work must not start once `cancel()` has returned, whichever
/// thread called it: what `EventLoop` and `NIOEventLoopExecutor` return from
/// `schedule(after:_:)`, and from `scheduleSelfGuarded(after:_:)` when they cannot name the timer
/// at once. (`TestLoop` needs no state of its own: its timers are under its lock, and its handle
/// is a value.)
///
/// Three states: pending, started (the work claimed the handle with ``begin()``), cancelled.
/// ``cancel()`` claims the handle before anything else, so work that begins with ``begin()``
/// cannot start after it; the timer itself is then removed on the loop's thread
/// (``LoopTimerRemoval/removeTimer(of:from:)``): at once from there, through a hop from anywhere
/// else.
///
/// The loop is held without a count (`UnownedReference`), so that a timer's work, which holds
/// its handle, never keeps its loop alive; a cancel after the loop is gone has nothing to remove.
///
/// `@unchecked Sendable`: `state` is atomic; ``timerID`` is touched on the loop's thread only;
/// `loop` never changes.
package final class LoopTimerHandle<Removal: LoopTimerRemoval>: PromiseScheduledWork, @unchecked Sendable {
    private enum State: UInt8 {
        case pending = 0
        case started = 1
        case cancelled = 2
    }

    private let loop: UnownedReference<Removal.Loop>
    private let state = Atomic<UInt8>(State.pending.rawValue)
    /// Where the timer is in the loop's timers, once inserted. On the loop's thread only
    /// (unchecked exclusivity: plain reads and writes, no user code in between).
    @exclusivity(unchecked) package var timerID: PromiseTimerID?

    /// A pending handle for a timer of `loop`.
    package init(loop: Removal.Loop) {
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
        Removal.removeTimer(of: self, from: loop)
    }

    /// The timer's identifier, once: `nil` if the timer was never inserted or was already taken.
    /// On the loop's thread.
    package func takeTimerID() -> PromiseTimerID? {
        defer { timerID = nil }
        return timerID
    }
}
