/// A stall as a ``LoopMonitor`` reports it; each loop turns it into its public report.
package struct LoopStallFigures: Sendable {
    /// The name of the work that held the loop (``LoopWorkIdentity/name``).
    package var work: String
    /// How long the work had held the loop when it was reported.
    package var duration: Duration
    /// Whether the work had ended when it was reported (false: the watchdog saw it running).
    package var isFinished: Bool
    /// The threshold the work went past.
    package var threshold: Duration
}

/// One tick as a ``LoopMonitor`` measured it; each loop turns it into its public figures.
package struct LoopTickFigures: Sendable {
    /// The loop that ticked.
    package var loopID: ObjectIdentifier
    /// The pieces of work the tick ran.
    package var itemCount: Int
    /// The time spent running that work.
    package var busyTime: Duration
    /// The time since the previous tick not spent running work.
    package var waitingTime: Duration
}

/// A ``LoopMonitor``'s running totals; each loop turns them into its public totals.
package struct LoopTickTotalsFigures: Sendable {
    /// Ticks counted.
    package var tickCount: UInt64
    /// Pieces of work run in those ticks.
    package var itemCount: UInt64
    /// Time spent running work.
    package var busyTime: Duration
    /// Time spent waiting between ticks.
    package var waitingTime: Duration
    /// Stalls reported.
    package var stallCount: UInt64
}
