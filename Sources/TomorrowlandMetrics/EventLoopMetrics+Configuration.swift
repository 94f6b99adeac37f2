#if Metrics
    import TomorrowlandLoop

    extension EventLoopMetrics {
        /// What `EventLoop.enableMetrics(name:configuration:factory:)` names its metrics, and what
        /// it turns on besides them.
        public struct Configuration: Sendable {
            /// The start of every metric's label: `tomorrowland_loop` gives
            /// `tomorrowland_loop_tick_duration` and so on (see ``Labels``).
            public var labelPrefix = "tomorrowland_loop"
            /// The dimension that names the loop: `loop` by default, valued with the name given to
            /// `EventLoop.enableMetrics(name:configuration:factory:)` (a group's loops: `0`, `1`, …).
            public var loopDimension = "loop"
            /// Dimensions every metric carries besides the loop's, first (a service's name, say).
            public var dimensions: [(String, String)] = []
            /// The stall threshold stall detection is turned on with, 50 ms by default; nil leaves
            /// stall detection as it is, and the stall counter then counts nothing.
            public var stallThreshold: Duration? = .milliseconds(50)
            /// Called with each stall after it is counted, on the thread that reports it (see
            /// `EventLoop.enableStallDetection(threshold:report:)`); nil by default: the counter is
            /// the only report. Pass `EventLoopStall.writeToStandardError` to log them too.
            public var stallReport: (@Sendable (EventLoopStall) -> Void)?
            /// Called on the loop's thread after each tick, after the metrics were recorded: the
            /// loop has one tick observer, which the metrics take, so pass yours here.
            public var tickObserver: (@Sendable (EventLoopTick) -> Void)?

            /// The defaults: labels starting with `tomorrowland_loop`, the dimension `loop`, stall
            /// detection at 50 ms with no report but the counter.
            public init() {}
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
            /// Gauge: the work queued to run when a tick ended (`<prefix>_queued_work`).
            public var queuedWork: String { prefix + "_queued_work" }
            /// Gauge: the timers armed when a tick ended (`<prefix>_armed_timers`).
            public var armedTimers: String { prefix + "_armed_timers" }
            /// Counter: the stalls reported (`<prefix>_stalls`).
            public var stalls: String { prefix + "_stalls" }
        }
    }
#endif
