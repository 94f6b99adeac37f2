/// What one tick of an ``EventLoop`` did, handed to the observer of
/// ``EventLoop/enableTickStatistics(observer:)`` after the tick.
///
/// A tick covers the time since the previous tick ended: the loop first waits in libevent (and
/// runs the handlers of what became ready: watchers, TCP), then runs the work that is due (a
/// round of its scheduling core).
public struct EventLoopTick: Sendable, Hashable {
    /// The pieces of work the tick ran: submitted closures, promise callbacks, timers, Swift
    /// Concurrency jobs, and the libevent callbacks (watcher handlers, TCP events) that ran since
    /// the previous tick.
    public var itemCount: Int
    /// The time spent running that work.
    public var busyTime: Duration
    /// The time since the previous tick not spent running work: waiting in libevent for a
    /// descriptor, a timer or a wake-up (for a borrowed base, also the host's own work). Zero for
    /// the first tick after the figures were turned on.
    public var waitingTime: Duration

    /// Creates the figures of a tick.
    public init(itemCount: Int, busyTime: Duration, waitingTime: Duration) {
        self.itemCount = itemCount
        self.busyTime = busyTime
        self.waitingTime = waitingTime
    }
}

/// Running totals of an ``EventLoop``'s ticks since tick statistics or stall detection was
/// first turned on, read from any thread with ``EventLoop/tickTotals``.
///
/// Each field is exact for the ticks it counts; the loop updates them one after another at the
/// end of a tick, so a reading taken while a tick ends may show one field with that tick and the
/// next without it.
public struct EventLoopTickTotals: Sendable, Hashable {
    /// Ticks counted.
    public var tickCount: UInt64
    /// Pieces of work run in those ticks (see ``EventLoopTick/itemCount``).
    public var itemCount: UInt64
    /// Time spent running work.
    public var busyTime: Duration
    /// Time spent waiting between ticks (see ``EventLoopTick/waitingTime``).
    public var waitingTime: Duration
    /// Stalls reported (see ``EventLoopStall``).
    public var stallCount: UInt64

    /// Creates totals.
    public init(tickCount: UInt64, itemCount: UInt64, busyTime: Duration, waitingTime: Duration, stallCount: UInt64) {
        self.tickCount = tickCount
        self.itemCount = itemCount
        self.busyTime = busyTime
        self.waitingTime = waitingTime
        self.stallCount = stallCount
    }
}
