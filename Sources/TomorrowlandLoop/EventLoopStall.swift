internal import TomorrowlandScheduling

/// A piece of loop work that held an ``EventLoop`` longer than its stall threshold, as stall
/// detection reports it (``EventLoop/enableStallDetection(threshold:report:)``).
///
/// Each piece of work is reported at most once: by the loop's watchdog thread while it still runs
/// (``isFinished`` is false, ``duration`` is how long it had run when the watchdog looked), or, if
/// it ended before the watchdog saw it past the threshold, by the loop right after it ended
/// (``isFinished`` is true, ``duration`` is exact).
public struct EventLoopStall: Sendable, Hashable, CustomStringConvertible {
    /// What held the loop: the symbol of the closure (for ``EventLoop/execute(_:)``,
    /// `schedule(after:)` and watcher handlers, demangled from the binary's symbol table), the
    /// kind and types of a promise callback, or the kind of work (a Swift Concurrency job, a
    /// libevent callback, `DispatchQueue.main` blocks).
    public var work: String
    /// How long the work had held the loop when it was reported.
    public var duration: Duration
    /// Whether the work had ended when it was reported: false when the watchdog reported it
    /// while it still ran.
    public var isFinished: Bool
    /// The threshold the work went past.
    public var threshold: Duration

    /// Creates a report; the loop makes them, this is for tests of a handler.
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
            "EventLoop stall: \(work) \(held) \(Self.milliseconds(duration)) (threshold \(Self.milliseconds(threshold))), \(state)"
    }

    /// The default report: writes ``description`` as one line to standard error.
    public static let writeToStandardError: @Sendable (EventLoopStall) -> Void = { stall in
        writeLineToStandardError(stall.description)
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = seconds * 10_000 + attoseconds / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}
