#if Metrics
    import CoreMetrics
    import Synchronization

    /// The swift-metrics objects of one loop's ``LoopMetrics``, an `EventLoop`'s or a NIO loop's
    /// (`NIOLoopMetricsDelegate`): created together under one set of dimensions, recorded after each tick
    /// and at each stall, destroyed together when detached.
    ///
    /// - Important: swift-metrics' `Timer`, `Recorder`, `Gauge` and `Counter` are safe from any
    ///   thread; the tick metrics are recorded on the loop's thread, the stall counter on the
    ///   watchdog's or the loop's.
    final class LoopInstruments: Sendable {
        let tickDuration: CoreMetrics.Timer
        let waitDuration: CoreMetrics.Timer
        let tickItems: Recorder
        /// Nil for a NIO loop: a NIO tick runs until no task is due, so nothing of the loop's
        /// is left queued when it ends.
        let queuedWork: Gauge?
        let armedTimers: Gauge
        let stalls: Counter
        private let detached = Atomic<Bool>(false)

        init(
            labels: LoopMetrics.Labels, dimensions: [(String, String)], measuresQueuedWork: Bool,
            factory: any MetricsFactory
        ) {
            tickDuration = CoreMetrics.Timer(
                label: labels.tickDuration, dimensions: dimensions, preferredDisplayUnit: .microseconds,
                factory: factory)
            waitDuration = CoreMetrics.Timer(
                label: labels.waitDuration, dimensions: dimensions, preferredDisplayUnit: .milliseconds,
                factory: factory)
            tickItems = Recorder(label: labels.tickItems, dimensions: dimensions, aggregate: true, factory: factory)
            queuedWork =
                measuresQueuedWork ? Gauge(label: labels.queuedWork, dimensions: dimensions, factory: factory) : nil
            armedTimers = Gauge(label: labels.armedTimers, dimensions: dimensions, factory: factory)
            stalls = Counter(label: labels.stalls, dimensions: dimensions, factory: factory)
        }

        var isAttached: Bool { !detached.load(ordering: .relaxed) }

        /// Marks the instruments detached; returns false if they already were.
        func markDetached() -> Bool {
            !detached.exchange(true, ordering: .relaxed)
        }

        /// On the loop's thread, after a tick.
        func recordTick(
            busyTime: Duration, waitingTime: Duration, itemCount: Int, queuedWork queued: Int?, armedTimers armed: Int
        ) {
            tickDuration.recordNanoseconds(Self.nanoseconds(busyTime))
            waitDuration.recordNanoseconds(Self.nanoseconds(waitingTime))
            tickItems.record(itemCount)
            if let queued { queuedWork?.record(queued) }
            armedTimers.record(armed)
        }

        /// At a stall report, on the thread that reports it.
        func recordStall() {
            if isAttached { stalls.increment() }
        }

        func destroy() {
            tickDuration.destroy()
            waitDuration.destroy()
            tickItems.destroy()
            queuedWork?.destroy()
            armedTimers.destroy()
            stalls.destroy()
        }

        private static func nanoseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
                ? .max : seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
        }
    }
#endif
