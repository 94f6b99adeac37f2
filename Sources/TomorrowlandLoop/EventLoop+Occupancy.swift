internal import TomorrowlandScheduling

extension EventLoop {
    /// What the loop holds right now: the work queued to run and the timers armed, for the
    /// metrics integration (TomorrowlandMetrics samples them from its tick observer).
    ///
    /// Loop-confined: read it on the loop's thread only (the tick observer of
    /// ``enableTickStatistics(observer:)`` runs there). Two counts the loop keeps anyway, plus one
    /// acquisition of the inbox lock for what other threads submitted and the loop has not taken
    /// yet; nothing on the loop's own paths reads or updates anything for it.
    package var occupancy: EventLoopOccupancy {
        // LoopInvariants: "Loop confinement": the core's counts are the driver's alone.
        assert(inEventLoop, "EventLoop.occupancy is read on the loop's thread only")
        let (inboxWork, inboxTimers) = inbox.withLock { ($0.work.count, $0.timers.count) }
        return EventLoopOccupancy(
            queuedWorkCount: core.readyCount + inboxWork, armedTimerCount: core.timerCount + inboxTimers)
    }
}

/// The work queued on an ``EventLoop`` and the timers armed on it, at one moment
/// (``EventLoop/occupancy``).
package struct EventLoopOccupancy: Sendable, Hashable {
    /// Work waiting to run: the loop's ready queue (closures, promise callbacks, Swift Concurrency
    /// jobs) and what other threads submitted that the loop has not taken yet.
    package var queuedWorkCount: Int
    /// Timers scheduled and neither run nor cancelled (a timer that is due but has not run yet
    /// still counts), including those other threads scheduled that the loop has not armed yet.
    package var armedTimerCount: Int
}
