#if NIO
    import NIOCore
    import NIOPosix

    /// What one tick of a NIO loop did, handed to the observer of ``NIOLoopTickStatistics``
    /// after the tick: NIO's `NIOEventLoopTickInfo`, with the work of the loop's
    /// ``NIOEventLoopExecutor`` counted piece by piece.
    ///
    /// A NIO tick runs the tasks that are due (after the loop waited for I/O and handled it).
    public struct NIOLoopTick: Sendable, Hashable {
        /// The loop that ticked (NIO's `eventLoopID`: `ObjectIdentifier` of the loop).
        public var eventLoopID: ObjectIdentifier
        /// The pieces of work the tick ran: NIO's tasks (closures given to the loop's `execute`,
        /// scheduled tasks and callbacks), where each NIO task of the executor that runs its
        /// queued work (a batch of promise callbacks and closures, or the timers due) counts as
        /// the items it ran, none if it ran none.
        public var itemCount: Int
        /// The time the tick spent running tasks (NIO's `endTime - startTime`).
        public var busyTime: Duration
        /// The time since the previous tick ended (NIO's `sleepTime`): waiting in the selector,
        /// and handling the I/O events it returned (channel reads and writes, which NIO does not
        /// time apart).
        public var waitingTime: Duration

        /// Creates the figures of a tick.
        public init(eventLoopID: ObjectIdentifier, itemCount: Int, busyTime: Duration, waitingTime: Duration) {
            self.eventLoopID = eventLoopID
            self.itemCount = itemCount
            self.busyTime = busyTime
            self.waitingTime = waitingTime
        }

        /// NIO's figures as they are (its task count), for a loop whose executor does not count.
        init(_ info: NIOEventLoopTickInfo) {
            self.init(
                eventLoopID: info.eventLoopID, itemCount: info.numberOfTasks,
                busyTime: .nanoseconds((info.endTime - info.startTime).nanoseconds),
                waitingTime: .nanoseconds(info.sleepTime.nanoseconds))
        }
    }

    /// Running totals of a NIO loop's ticks and stalls, read from any thread with
    /// ``NIOEventLoopExecutor/tickTotals``.
    ///
    /// The tick fields count the ticks ``NIOLoopTickStatistics`` saw for the loop; ``stallCount``
    /// counts the stalls its executor's stall detection reported. Each field is exact for what it
    /// counts; the loop updates them one after another at the end of a tick, so a reading taken
    /// while a tick ends may show one field with that tick and the next without it.
    public struct NIOLoopTickTotals: Sendable, Hashable {
        /// Ticks counted.
        public var tickCount: UInt64
        /// Pieces of work run in those ticks (see ``NIOLoopTick/itemCount``).
        public var itemCount: UInt64
        /// Time spent running tasks.
        public var busyTime: Duration
        /// Time spent between ticks (see ``NIOLoopTick/waitingTime``).
        public var waitingTime: Duration
        /// Stalls reported (see ``NIOLoopStall``).
        public var stallCount: UInt64

        /// Creates totals.
        public init(tickCount: UInt64, itemCount: UInt64, busyTime: Duration, waitingTime: Duration, stallCount: UInt64)
        {
            self.tickCount = tickCount
            self.itemCount = itemCount
            self.busyTime = busyTime
            self.waitingTime = waitingTime
            self.stallCount = stallCount
        }
    }
#endif
