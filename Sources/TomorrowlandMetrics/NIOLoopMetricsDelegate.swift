#if Metrics && NIO
    import CoreMetrics
    import NIOCore
    import NIOPosix
    import Tomorrowland
    import TomorrowlandNIO

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Per-loop figures of the loops of a SwiftNIO `MultiThreadedEventLoopGroup` reported through
    /// swift-metrics: how long each tick ran tasks and waited, how many pieces of work it ran, the
    /// timers its `NIOEventLoopExecutor` had armed when it ended, and the
    /// stalls. One ``LoopMetrics`` per loop (``metrics``): an `EventLoop`'s metrics but the queued
    /// work, labelled `tomorrowland_nio_loop_…` by default (``LoopMetrics/Configuration/nio``).
    ///
    /// Give it to the group as its metrics delegate (a group takes one, when it is made):
    ///
    /// ```swift
    /// MetricsSystem.bootstrap(myBackendFactory)  // first: the metrics take the factory now
    /// let metrics = NIOLoopMetricsDelegate()
    /// let group = MultiThreadedEventLoopGroup(numberOfThreads: 4, metricsDelegate: metrics)
    /// ```
    ///
    /// Each loop's metrics are made at its first tick, on its thread, under the dimension
    /// ``LoopMetrics/Configuration/loopDimension`` (`loop`) valued with the loop's name: its
    /// thread's name by default (NIO names them `NIO-ELT-<group>-#<loop>`), or what the
    /// initializer's `loopName` returns. That first tick also turns on the stall detection of the
    /// loop's executor (`NIOEventLoopExecutor.enableStallDetection(threshold:report:)`) at
    /// ``LoopMetrics/Configuration/stallThreshold``, 50 ms by default, replacing any report set
    /// on it before.
    ///
    /// What it measures and what it does not:
    /// - The tick figures are `NIOLoopTickStatistics`'s: NIO's own, with the
    ///   executor's work counted piece by piece. Every tick of the loop is measured, whatever ran
    ///   in it.
    /// - Armed timers are the executor's (`timeout`, `delay` and `schedule(after:_:)` on the loop),
    ///   not NIO's scheduled tasks: NIO does not publish those.
    /// - There is no queued-work gauge: a NIO tick runs tasks until none is due (the executor's
    ///   drains included), so nothing is left queued when it ends.
    /// - Stalls are the executor's work only (promise callbacks and timers on `.nio(loop)`,
    ///   closures given to the executor): NIO cannot time its own tasks one by one.
    ///
    /// Costs: NIOLoopTickStatistics's (NIO reads the clock twice per tick once a delegate is set),
    /// then, on the loop's thread after each tick, one lock acquisition to find the loop's
    /// metrics, and the recordings of an `EventLoop`'s metrics but one gauge: two timers, one
    /// recorder, one gauge. Stall detection costs what the executor's documentation says.
    public final class NIOLoopMetricsDelegate: NIOEventLoopMetricsDelegate {
        /// The label of each metric, as created for every loop.
        public let labels: LoopMetrics.Labels

        private let registry: NIOLoopMetricsRegistry
        private let statistics: NIOLoopTickStatistics

        /// Creates the delegate; nothing is recorded until a loop of the group it is given to
        /// ticks.
        ///
        /// - Parameters:
        ///   - configuration: Labels, extra dimensions, the stall threshold, and the observer and
        ///     report to call after the metrics' own; ``LoopMetrics/Configuration/nio`` by default.
        ///   - loopName: Names a loop, called once per loop, on its thread, at its first tick; nil
        ///     by default: a loop is named by its thread's name (`NIO-ELT-0-#1`). Names must be
        ///     unique among the loops that report to one backend, or their series mix.
        ///   - factory: Where the metrics go: the global `MetricsSystem.factory` when this is
        ///     made (bootstrap first) by default; tests pass a factory of their own.
        ///   - next: A metrics delegate of your own, called with NIO's figures after this one
        ///     (a group takes one delegate).
        @preconcurrency
        public init(
            configuration: LoopMetrics.Configuration = .nio,
            loopName: (@Sendable (any EventLoop) -> String)? = nil,
            factory: any MetricsFactory = MetricsSystem.factory,
            forwardingTo next: (any NIOEventLoopMetricsDelegate)? = nil
        ) {
            labels = LoopMetrics.Labels(prefix: configuration.labelPrefix)
            let registry = NIOLoopMetricsRegistry(
                labels: labels, configuration: configuration, loopName: loopName, factory: factory)
            self.registry = registry
            let tickObserver = configuration.tickObserver
            statistics = NIOLoopTickStatistics(
                observer: { tick in
                    registry.record(tick)
                    tickObserver?(tick)
                },
                forwardingTo: next)
        }

        /// NIO's call after each tick of a loop, on the loop's thread.
        public func processedTick(info: NIOEventLoopTickInfo) {
            statistics.processedTick(info: info)
        }

        /// The metrics of the loops measured so far, one per loop, in the order of their first
        /// tick.
        public var metrics: [LoopMetrics] {
            registry.metrics
        }

        /// The names of the loops measured so far (the values of their loop dimension), in the
        /// order of their first tick.
        public var loopNames: [String] {
            metrics.map(\.name)
        }

        /// Stops recording: detaches every loop's metrics (``LoopMetrics/detach()``: turns off the
        /// stall detection they turned on, and destroys them) and makes none for later loops. Safe
        /// from any thread; calling it again does nothing.
        ///
        /// NIO keeps calling the delegate until its group shuts down: later ticks record nothing
        /// (they still reach ``LoopMetrics/Configuration/tickObserver`` and the forwarded
        /// delegate) and make no metrics.
        public func detach() {
            registry.detach()
        }

        /// Whether ``detach()`` was called.
        public var isDetached: Bool {
            registry.isDetached
        }
    }

    /// The loops of one ``NIOLoopMetricsDelegate``: each loop's metrics and executor, made at its
    /// first tick.
    final class NIOLoopMetricsRegistry: Sendable {
        private struct Entry {
            let metrics: LoopMetrics
            let executor: NIOEventLoopExecutor
        }

        private struct State {
            var entries: [ObjectIdentifier: Entry] = [:]
            /// The metrics in the order of their loops' first tick.
            var ordered: [LoopMetrics] = []
            var isDetached = false
        }

        private let labels: LoopMetrics.Labels
        private let configuration: LoopMetrics.Configuration
        private let loopName: (@Sendable (any EventLoop) -> String)?
        private let factory: any MetricsFactory
        private let state = LockedValue(State())

        init(
            labels: LoopMetrics.Labels, configuration: LoopMetrics.Configuration,
            loopName: (@Sendable (any EventLoop) -> String)?, factory: any MetricsFactory
        ) {
            self.labels = labels
            self.configuration = configuration
            self.loopName = loopName
            self.factory = factory
        }

        var metrics: [LoopMetrics] {
            state.withLock { $0.ordered }
        }

        var isDetached: Bool {
            state.withLock { $0.isDetached }
        }

        /// On the loop's thread, after a tick.
        func record(_ tick: LoopTick) {
            enum Lookup {
                case detached
                case found(Entry)
                case firstTick
            }
            let lookup = state.withLock { state -> Lookup in
                if state.isDetached { return .detached }
                return state.entries[tick.loopID].map(Lookup.found) ?? .firstTick
            }
            let entry: Entry
            switch lookup {
            case .detached: return
            case .found(let existing): entry = existing
            case .firstTick:
                guard let made = makeEntry(for: tick.loopID) else { return }
                entry = made
            }
            let instruments = entry.metrics.instruments
            guard instruments.isAttached else { return }
            // The executor's timers are the loop thread's state, and this is the loop's thread.
            instruments.recordTick(
                busyTime: tick.busyTime, waitingTime: tick.waitingTime, itemCount: tick.itemCount,
                queuedWork: nil, armedTimers: entry.executor.armedTimerCountOnLoopThread)
        }

        /// The first tick of a loop, on its thread: names it, makes its metrics and turns its
        /// executor's stall detection on. Nil when the calling thread is not that loop's (a
        /// delegate given to something other than a `MultiThreadedEventLoopGroup`) or the metrics
        /// were detached meanwhile.
        @inline(never)
        private func makeEntry(for eventLoopID: ObjectIdentifier) -> Entry? {
            guard let loop = MultiThreadedEventLoopGroup.currentEventLoop, ObjectIdentifier(loop) == eventLoopID
            else { return nil }
            let name = loopName?(loop) ?? Self.currentThreadName() ?? "\(eventLoopID)"
            let dimensions = configuration.dimensions + [(configuration.loopDimension, name)]
            let instruments = LoopInstruments(
                labels: labels, dimensions: dimensions, measuresQueuedWork: false, factory: factory)
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let ownsStallDetection = configuration.stallThreshold != nil
            let metrics = LoopMetrics(name: name, labels: labels, instruments: instruments) {
                if ownsStallDetection { executor.disableStallDetection() }
            }
            let entry = Entry(metrics: metrics, executor: executor)
            let inserted = state.withLock { state -> Bool in
                guard !state.isDetached else { return false }
                state.entries[eventLoopID] = entry
                state.ordered.append(metrics)
                return true
            }
            guard inserted else {
                instruments.destroy()
                return nil
            }
            if let threshold = configuration.stallThreshold {
                let stallReport = configuration.stallReport
                executor.enableStallDetection(threshold: threshold) { [instruments] stall in
                    instruments.recordStall()
                    stallReport?(stall)
                }
                // A detach between the insertion and here found no stall detection to turn off:
                // turn it off now, so that it never outlives the metrics.
                if metrics.isDetached { executor.disableStallDetection() }
            }
            return entry
        }

        func detach() {
            let detached = state.withLock { state -> [LoopMetrics] in
                guard !state.isDetached else { return [] }
                state.isDetached = true
                return state.ordered
            }
            for metrics in detached { metrics.detach() }
        }

        /// The calling thread's name, read from `/proc/thread-self/comm` (glibc's
        /// `pthread_getname_np` is not visible to Swift), nil if it cannot be read or is empty.
        private static func currentThreadName() -> String? {
            #if canImport(Glibc)
                let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return nil }
                defer { close(fd) }
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return nil }
                // The kernel ends the name with a newline.
                let name = String(decoding: buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
                return name.isEmpty ? nil : name
            #else
                return nil
            #endif
        }
    }
#endif
