#if NIO
    internal import TomorrowlandScheduling

    /// A piece of work of a ``NIOEventLoopExecutor`` that held its NIO loop longer than the stall
    /// threshold, as stall detection reports it
    /// (``NIOEventLoopExecutor/enableStallDetection(threshold:report:)``).
    ///
    /// Each piece of work is reported at most once: by the executor's watchdog thread while it
    /// still runs (``isFinished`` is false, ``duration`` is how long it had run when the watchdog
    /// looked), or, if it ended before the watchdog saw it past the threshold, on the loop right
    /// after it ended (``isFinished`` is true, ``duration`` is exact).
    public struct NIOLoopStall: Sendable, Hashable, CustomStringConvertible {
        /// What held the loop: the symbol of a closure given to ``NIOEventLoopExecutor/submit(_:)``
        /// (demangled from the binary's symbol table), the kind and types of a promise callback
        /// or timer. A closure given to `schedule(after:_:)` runs inside the executor's closure
        /// that checks its handle first, and is named by that one
        /// (`closure #1 in NIOEventLoopExecutor.schedule(after:_:)`).
        public var work: String
        /// How long the work had held the loop when it was reported.
        public var duration: Duration
        /// Whether the work had ended when it was reported: false when the watchdog reported it
        /// while it still ran.
        public var isFinished: Bool
        /// The threshold the work went past.
        public var threshold: Duration

        /// Creates a report; the executor makes them, this is for tests of a handler.
        public init(work: String, duration: Duration, isFinished: Bool, threshold: Duration) {
            self.work = work
            self.duration = duration
            self.isFinished = isFinished
            self.threshold = threshold
        }

        /// One line: what held the loop, for how long, and whether it still runs.
        public var description: String {
            let held = isFinished ? "held the loop for" : "has held the loop for"
            let state = isFinished ? "ended" : "still running"
            return
                "NIO loop stall: \(work) \(held) \(Self.milliseconds(duration)) (threshold \(Self.milliseconds(threshold))), \(state)"
        }

        /// The default report: writes ``description`` as one line to standard error.
        public static let writeToStandardError: @Sendable (NIOLoopStall) -> Void = { stall in
            writeLineToStandardError(stall.description)
        }

        private static func milliseconds(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            let tenths = seconds * 10_000 + attoseconds / 100_000_000_000_000
            return "\(tenths / 10).\(tenths % 10) ms"
        }
    }
#endif
