import Tomorrowland
internal import TomorrowlandScheduling

extension TestLoop {
    /// Keeps a promise timer (a `timeout`, `delay`, `Promise(on:…after:)` or `retry` on this loop)
    /// in the loop's virtual timers as it is, as an `EventLoop` does on its thread: same deadline
    /// and order as ``schedule(after:_:)`` (one sequence counter), from any thread.
    ///
    /// When due, the driving thread calls `timer.timerFired()`. Shutdown releases a pending stored
    /// timer unrun with `timer.timerReleased()`, so the promise waiting on it ends cancelled.
    ///
    /// - Returns: The timer's identifier, or `nil` after shutdown (nothing is stored; the promise
    ///   core then arms the timer with ``schedule(after:_:)``, which refuses it).
    public func storeTimer(_ timer: any PromiseTimerJob, after delay: Duration) -> PromiseTimerID? {
        state.withLock { state -> PromiseTimerID? in
            guard state.lifecycle.admitsWork else { return nil }
            let nanoseconds = state.core.nanoseconds(of: delay)
            return state.core.schedule(at: state.core.deadline(after: nanoseconds), .promiseTimer(timer))
        }
    }

    /// Removes a timer stored with ``storeTimer(_:after:)`` and releases the loop's reference to
    /// it, unrun, if it is still pending. Safe from any thread.
    public func cancelStoredTimer(_ id: PromiseTimerID) {
        cancel(id)
    }
}
