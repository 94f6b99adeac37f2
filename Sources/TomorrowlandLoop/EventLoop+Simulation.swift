internal import TomorrowlandScheduling

extension EventLoop {
    /// When this simulated loop next has something to do, on the simulation's clock: now when
    /// work is ready (or waits in the inbox, or shutdown was asked for), its earliest timer's
    /// deadline otherwise; nil when it is idle with no timer (or shut down).
    ///
    /// Called by the simulation, on its thread, while it does not run the loop.
    package func simulationNextEventTime() -> UInt64? {
        precondition(isSimulated, "EventLoop.simulationNextEventTime() is for simulated loops")
        return withConfinedState("simulationNextEventTime()", ifShutDown: nil) { [self] () -> UInt64? in
            if isShutDown { return nil }
            if core.readyCount > 0 { return currentTime() }
            let inboxBusy = inbox.withLock { inbox in
                !inbox.work.isEmpty || !inbox.timers.isEmpty || inbox.lifecycle.phase == .shutdownRequested
            }
            if inboxBusy { return currentTime() }
            return core.nextTimerDeadline
        }
    }

    /// Runs one turn of this simulated loop at the simulation's current time: a tick (the work
    /// that is ready and the timers due), repeated while other loops' submissions keep arriving,
    /// as a callback of the loop would.
    package func simulationRunTurn() {
        withCallbackEntered {}
    }
}

extension EventLoop {
    /// Runs `body` as a callback of this simulated loop (a readiness the simulation delivers, an
    /// accept, a connect's answer), then the turn it makes ready, as a libevent callback does on
    /// a real loop.
    package func simulationRunCallback(_ body: () -> Void) {
        withCallbackEntered(body)
    }
}
