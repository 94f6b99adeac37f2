#if Metrics
    import Tomorrowland

    extension LoopMetrics {
        /// How a loop's metrics are named, and what they turn on besides them: for an
        /// `EventLoop` (`EventLoop.enableMetrics(name:configuration:factory:)`, ``init()``) or
        /// the loops of a NIO group (`NIOLoopMetricsDelegate`, ``nio``).
        public struct Configuration: Sendable {
            /// The start of every metric's label: `tomorrowland_loop` gives
            /// `tomorrowland_loop_tick_duration` and so on (see ``Labels``); ``nio`` starts them
            /// with `tomorrowland_nio_loop`.
            public var labelPrefix = "tomorrowland_loop"
            /// The dimension that names the loop: `loop` by default, valued with the loop's name
            /// (the name given to `EventLoop.enableMetrics(name:configuration:factory:)`, a
            /// group's loops: `0`, `1`, …; a NIO loop's: see `NIOLoopMetricsDelegate`).
            public var loopDimension = "loop"
            /// Dimensions every metric carries besides the loop's, first (a service's name, say).
            public var dimensions: [(String, String)] = []
            /// The stall threshold the loop's stall detection is turned on with, 50 ms by
            /// default; nil leaves stall detection as it is, and the stall counter then counts
            /// nothing.
            public var stallThreshold: Duration? = .milliseconds(50)
            /// Called with each stall after it is counted, on the thread that reports it (see
            /// `EventLoop.enableStallDetection(threshold:report:)` and
            /// `NIOEventLoopExecutor.enableStallDetection(threshold:report:)`); nil by default:
            /// the counter is the only report. Pass `LoopStall.writeToStandardError` to log them
            /// too.
            public var stallReport: (@Sendable (LoopStall) -> Void)?
            /// Called on the loop's thread after each tick, after the metrics were recorded: an
            /// `EventLoop` has one tick observer, which the metrics take, so pass yours here.
            public var tickObserver: (@Sendable (LoopTick) -> Void)?

            /// The defaults for an `EventLoop`: labels starting with `tomorrowland_loop`, the
            /// dimension `loop`, stall detection at 50 ms with no report but the counter.
            public init() {}

            /// The defaults for the loops of a NIO group: those of ``init()`` with labels
            /// starting with `tomorrowland_nio_loop`.
            public static var nio: Configuration {
                var configuration = Configuration()
                configuration.labelPrefix = "tomorrowland_nio_loop"
                return configuration
            }
        }

        /// The labels of one loop's metrics, from ``Configuration/labelPrefix``.
        public struct Labels: Sendable, Hashable {
            /// The label every other one starts with, then `_`.
            public var prefix: String

            /// Labels starting with `prefix`.
            public init(prefix: String) {
                self.prefix = prefix
            }

            /// Timer: the time each tick spent running work (`<prefix>_tick_duration`).
            public var tickDuration: String { prefix + "_tick_duration" }
            /// Timer: the time the loop waited before each tick (`<prefix>_wait_duration`).
            public var waitDuration: String { prefix + "_wait_duration" }
            /// Recorder (aggregate): the pieces of work each tick ran (`<prefix>_tick_items`).
            public var tickItems: String { prefix + "_tick_items" }
            /// Gauge: the work queued to run when a tick ended (`<prefix>_queued_work`); an
            /// `EventLoop`'s only.
            public var queuedWork: String { prefix + "_queued_work" }
            /// Gauge: the timers armed when a tick ended (`<prefix>_armed_timers`).
            public var armedTimers: String { prefix + "_armed_timers" }
            /// Counter: the stalls reported (`<prefix>_stalls`).
            public var stalls: String { prefix + "_stalls" }
        }
    }
#endif
