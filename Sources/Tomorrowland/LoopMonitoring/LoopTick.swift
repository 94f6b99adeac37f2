/// What one tick of a loop did, handed to a tick observer after the tick: an `EventLoop`'s
/// (`EventLoop.enableTickStatistics(observer:)`) or a NIO loop's (`NIOLoopTickStatistics`).
///
/// An `EventLoop`'s tick covers the time since the previous tick ended: the loop first waits in
/// libevent (and runs the handlers of what became ready: watchers, TCP), then runs the work that
/// is due (a round of its scheduling core). A NIO tick runs the tasks that are due, after the
/// loop waited for I/O and handled it; its figures are NIO's `NIOEventLoopTickInfo`, with the
/// work of the loop's `NIOEventLoopExecutor` counted piece by piece.
public struct LoopTick: Sendable, Hashable {
    /// The loop that ticked: `ObjectIdentifier` of the `EventLoop`, or of the NIO loop (NIO's
    /// `eventLoopID`).
    public var loopID: ObjectIdentifier
    /// The pieces of work the tick ran.
    ///
    /// - An `EventLoop`: submitted closures, promise callbacks, timers, Swift Concurrency jobs,
    ///   and the libevent callbacks (watcher handlers, TCP events) that ran since the previous
    ///   tick.
    /// - A NIO loop: NIO's tasks (closures given to the loop's `execute`, scheduled tasks and
    ///   callbacks), where each NIO task of the executor that runs its queued work (a batch of
    ///   promise callbacks and closures, or the timers due) counts as the items it ran, none if
    ///   it ran none.
    public var itemCount: Int
    /// The time spent running that work (for a NIO loop, NIO's `endTime - startTime`).
    public var busyTime: Duration
    /// The time since the previous tick not spent running work.
    ///
    /// - An `EventLoop`: waiting in libevent for a descriptor, a timer or a wake-up (for a
    ///   borrowed base, also the host's own work). Zero for the first tick after the figures were
    ///   turned on.
    /// - A NIO loop: NIO's `sleepTime`, waiting in the selector and handling the I/O events it
    ///   returned (channel reads and writes, which NIO does not time apart).
    public var waitingTime: Duration

    /// Creates the figures of a tick.
    public init(loopID: ObjectIdentifier, itemCount: Int, busyTime: Duration, waitingTime: Duration) {
        self.loopID = loopID
        self.itemCount = itemCount
        self.busyTime = busyTime
        self.waitingTime = waitingTime
    }
}

/// Running totals of a loop's ticks and stalls, read from any thread: `EventLoop.tickTotals`,
/// `NIOEventLoopExecutor.tickTotals`.
///
/// An `EventLoop` counts its ticks while tick statistics or stall detection is on. For a NIO
/// loop, the tick fields count the ticks `NIOLoopTickStatistics` saw for the loop, and
/// ``stallCount`` the stalls its executor's stall detection reported. Each field is exact for
/// what it counts; the loop updates them one after another at the end of a tick, so a reading
/// taken while a tick ends may show one field with that tick and the next without it.
public struct LoopTickTotals: Sendable, Hashable {
    /// Ticks counted.
    public var tickCount: UInt64
    /// Pieces of work run in those ticks (see ``LoopTick/itemCount``).
    public var itemCount: UInt64
    /// Time spent running work.
    public var busyTime: Duration
    /// Time spent waiting between ticks (see ``LoopTick/waitingTime``).
    public var waitingTime: Duration
    /// Stalls reported (see ``LoopStall``).
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
