#if Metrics && NIO
    import NIOCore
    import TomorrowlandNIO

    extension NIOLoopMetrics {
        /// How ``NIOLoopMetrics`` names its metrics and its loops, and what it turns on besides
        /// them.
        public struct Configuration: Sendable {
            /// The start of every metric's label: `tomorrowland_nio_loop` gives
            /// `tomorrowland_nio_loop_tick_duration` and so on (see ``EventLoopMetrics/Labels``).
            public var labelPrefix = "tomorrowland_nio_loop"
            /// The dimension that names the loop: `loop` by default, valued with the loop's name
            /// (see ``loopName``).
            public var loopDimension = "loop"
            /// Dimensions every metric carries besides the loop's, first (a service's name, say).
            public var dimensions: [(String, String)] = []
            /// Names a loop, called once per loop, on its thread, at its first tick; nil by
            /// default: a loop is named by its thread's name (`NIO-ELT-0-#1`). Names must be
            /// unique among the loops that report to one backend, or their series mix.
            public var loopName: (@Sendable (any EventLoop) -> String)?
            /// The stall threshold each loop executor's stall detection is turned on with, 50 ms
            /// by default; nil leaves stall detection as it is, and the stall counter then counts
            /// nothing.
            public var stallThreshold: Duration? = .milliseconds(50)
            /// Called with each stall after it is counted, on the thread that reports it (see
            /// `NIOEventLoopExecutor.enableStallDetection(threshold:report:)`); nil by default:
            /// the counter is the only report. Pass `NIOLoopStall.writeToStandardError` to log
            /// them too.
            public var stallReport: (@Sendable (NIOLoopStall) -> Void)?
            /// Called on the loop's thread after each tick, after the metrics were recorded.
            public var tickObserver: (@Sendable (NIOLoopTick) -> Void)?

            /// The defaults: labels starting with `tomorrowland_nio_loop`, loops named by their
            /// threads under the dimension `loop`, stall detection at 50 ms with no report but the
            /// counter.
            public init() {}
        }
    }
#endif
