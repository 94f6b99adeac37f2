internal import TomorrowlandScheduling

/// How a backend that drives its loops from outside (``EventLoopBackend/isDrivenExternally``: a
/// simulated host's) runs them: it asks each loop when it next has something to do, and runs its
/// turns and its callbacks then, on the one thread that drives them all.
extension EventLoop {
    /// When this loop next has something to do, on its clock: now when work is ready (or waits
    /// in the inbox, or shutdown was asked for), its earliest timer's deadline otherwise; nil
    /// when it is idle with no timer (or shut down).
    ///
    /// For the thread that drives the loop from outside, while it does not run the loop.
    package func nextEventTime() -> UInt64? {
        withConfinedState("nextEventTime()", ifShutDown: nil) { [self] () -> UInt64? in
            if isShutDown { return nil }
            if core.readyCount > 0 { return currentTime() }
            let inboxBusy = inbox.withLock { inbox in
                !inbox.work.isEmpty || !inbox.timers.isEmpty || inbox.lifecycle.phase == .shutdownRequested
            }
            if inboxBusy { return currentTime() }
            return core.nextTimerDeadline
        }
    }

    /// Runs one turn of this loop at its clock's current time: a tick (the work that is ready and
    /// the timers due), repeated while other loops' submissions keep arriving, as a callback of
    /// the loop would.
    package func runTurn() {
        withCallbackEntered {}
    }

    /// Runs `body` as a callback of this loop (a readiness the backend delivers, an accept, a
    /// connect's answer), then the turn it makes ready, as a libevent callback does on a loop
    /// made with ``init()``.
    package func runCallback(_ body: () -> Void) {
        withCallbackEntered(body)
    }
}
