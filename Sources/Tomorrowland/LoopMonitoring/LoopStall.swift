/// A piece of loop work that held its loop longer than the stall threshold, as stall detection
/// reports it: an `EventLoop`'s (`EventLoop.enableStallDetection(threshold:report:)`) or a NIO
/// loop executor's (`NIOEventLoopExecutor.enableStallDetection(threshold:report:)`).
///
/// Each piece of work is reported at most once: by the loop's watchdog thread while it still runs
/// (``isFinished`` is false, ``duration`` is how long it had run when the watchdog looked), or, if
/// it ended before the watchdog saw it past the threshold, on the loop right after it ended
/// (``isFinished`` is true, ``duration`` is exact).
public struct LoopStall: Sendable, Hashable, CustomStringConvertible {
    /// What held the loop.
    ///
    /// - The symbol of a closure (given to an `EventLoop`'s `execute(_:)` or `schedule(after:_:)`,
    ///   a watcher handler, or a closure given to `NIOEventLoopExecutor.submit(_:)`), demangled
    ///   from the binary's symbol table when the binary is not stripped, its binary and offset
    ///   otherwise. A closure given to `NIOEventLoopExecutor.schedule(after:_:)` runs inside the
    ///   executor's closure that checks its handle first, and is named by that one
    ///   (`closure #1 in NIOEventLoopExecutor.schedule(after:_:)`).
    /// - The kind and types of a promise callback or timer.
    /// - The kind of work: a Swift Concurrency job, a libevent callback, `DispatchQueue.main`
    ///   blocks.
    public var work: String
    /// How long the work had held the loop when it was reported.
    public var duration: Duration
    /// Whether the work had ended when it was reported: false when the watchdog reported it
    /// while it still ran.
    public var isFinished: Bool
    /// The threshold the work went past.
    public var threshold: Duration
    /// The kind of loop that stalled, as ``description`` starts: `EventLoop` for an
    /// `EventLoop`, `NIO loop` for a NIO loop's executor.
    public var loopKind: String

    /// Creates a report; the loops make them, this is for tests of a handler.
    public init(work: String, duration: Duration, isFinished: Bool, threshold: Duration, loopKind: String = "loop") {
        self.work = work
        self.duration = duration
        self.isFinished = isFinished
        self.threshold = threshold
        self.loopKind = loopKind
    }

    /// One line: what held the loop, for how long, and whether it still runs.
    public var description: String {
        let held = isFinished ? "held the loop for" : "has held the loop for"
        let state = isFinished ? "ended" : "still running"
        return
            "\(loopKind) stall: \(work) \(held) \(Self.milliseconds(duration)) (threshold \(Self.milliseconds(threshold))), \(state)"
    }

    /// The default report: writes ``description`` as one line to standard error.
    public static let writeToStandardError: @Sendable (LoopStall) -> Void = { stall in
        writeLineToStandardError(stall.description)
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = seconds * 10_000 + attoseconds / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}
