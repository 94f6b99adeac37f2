#if NIO
    import NIOCore
    import NIOPosix
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// Per-tick figures of the loops of a `MultiThreadedEventLoopGroup`: give it to the group as
    /// its metrics delegate.
    ///
    /// ```swift
    /// let statistics = NIOLoopTickStatistics { tick in
    ///     if tick.busyTime > .milliseconds(10) { logger.warning("slow tick: \(tick)") }
    /// }
    /// let group = MultiThreadedEventLoopGroup(numberOfThreads: 4, metricsDelegate: statistics)
    /// // later, from any thread:
    /// let totals = NIOEventLoopExecutor.shared(for: group.next()).tickTotals
    /// ```
    ///
    /// After each tick of a loop, NIO calls ``processedTick(info:)`` on the loop's thread, which
    /// turns NIO's `NIOEventLoopTickInfo` into a `LoopTick`: the same time figures, and the
    /// items counted piece by piece: the loop's ``NIOEventLoopExecutor`` counts the promise
    /// callbacks, closures and timers each of its NIO tasks runs, where NIO counts the task once.
    /// It adds the tick to the executor's ``NIOEventLoopExecutor/tickTotals`` and calls
    /// `observer`, then the delegate it forwards to, if any.
    ///
    /// The first tick of each loop makes the loop's executor (``NIOEventLoopExecutor/shared(for:)``)
    /// if it did not exist yet, and starts its counting: that tick's `LoopTick.itemCount` is
    /// NIO's task count as it is.
    ///
    /// To export these figures through swift-metrics, give the group TomorrowlandMetrics'
    /// `NIOLoopMetricsDelegate` instead (trait `Metrics`): it records each tick of this delegate's.
    ///
    /// What it costs: NIO reads the clock twice per tick once a delegate is set, and calls it; the
    /// figures are a thread-local lookup and a few relaxed atomic stores. The executor then runs
    /// its work on its counting path: a check and two additions per NIO task of its own.
    public final class NIOLoopTickStatistics: NIOEventLoopMetricsDelegate {
        private let observer: (@Sendable (LoopTick) -> Void)?
        private let next: (any NIOEventLoopMetricsDelegate)?

        /// Creates the delegate.
        ///
        /// - Parameters:
        ///   - observer: Called on the loop's thread after each tick, with its figures: keep it
        ///     short (NIO calls it between two ticks, and the loop waits for it), and do not
        ///     block on the loop from it.
        ///   - next: A metrics delegate of your own, called with NIO's figures after `observer`
        ///     (a group takes one delegate).
        @preconcurrency
        public init(
            observer: (@Sendable (LoopTick) -> Void)? = nil,
            forwardingTo next: (any NIOEventLoopMetricsDelegate)? = nil
        ) {
            self.observer = observer
            self.next = next
        }

        /// NIO's call after each tick of a loop, on the loop's thread.
        public func processedTick(info: NIOEventLoopTickInfo) {
            let busy = UInt64(clamping: (info.endTime - info.startTime).nanoseconds)
            let waiting = UInt64(clamping: info.sleepTime.nanoseconds)
            let tick: LoopTick
            if let monitor = NIOLoopMonitorBinding.monitor(forLoop: info.eventLoopID) {
                tick = monitor.recordReportedTick(
                    loopID: info.eventLoopID, tasks: info.numberOfTasks, busy: busy, waiting: waiting)
            } else {
                // A loop whose executor does not count: NIO's figures as they are.
                tick = LoopTick(
                    loopID: info.eventLoopID, itemCount: info.numberOfTasks,
                    busyTime: .nanoseconds(Int64(clamping: busy)), waitingTime: .nanoseconds(Int64(clamping: waiting)))
            }
            observer?(tick)
            next?.processedTick(info: info)
        }
    }
#endif
