/// A root promise still pending when a ``PendingPromiseReport`` was taken, or one whose resolver
/// was dropped without resolving it: where it was made, when, and on which context.
///
/// A root promise is one that something outside the library's combinators must settle: made by
/// `Promise.makeWithResolver()`, `Promise(on:_:)`, a `DelayedPromise` once started, a `Task`
/// bridge (`Promise(priority:operation:)`, `Promise(executorPreference:priority:operation:)`) or a
/// bridge from a SwiftNIO future. Promises derived from others (`map`, `then`, `flatMap`, …) are
/// not recorded: they wait for their upstream, which is.
public struct PendingPromise: Sendable, Hashable, CustomStringConvertible {
    /// The promise's type, as `Promise<Int, Error>`.
    public var type: String
    /// The file the promise was made in, as `#fileID` spells it (`Module/File.swift`).
    public var fileID: String
    /// The line the promise was made on.
    public var line: Int
    /// The context its work closure was given (`Promise(on:_:)`, `DelayedPromise(on:_:)`), as
    /// `.main`, `.immediate`, `.executor(EventLoop)`…; nil for a promise made with its resolver or
    /// by a bridge.
    public var context: String?
    /// How long ago it was made, by the monotonic clock.
    public var age: Duration
    /// How long ago it was made by the virtual clock of the `TestLoop` of the `withTestLoop` scope
    /// it was made in; nil outside such a scope.
    public var virtualAge: Duration?
    /// Whether cancellation was requested and the promise waits for its resolver to act on it.
    public var isCancelRequested: Bool

    /// Creates a record; the tracking makes them, this is for tests of a handler.
    public init(
        type: String, fileID: String, line: Int, context: String?, age: Duration, virtualAge: Duration?,
        isCancelRequested: Bool
    ) {
        self.type = type
        self.fileID = fileID
        self.line = line
        self.context = context
        self.age = age
        self.virtualAge = virtualAge
        self.isCancelRequested = isCancelRequested
    }

    /// Where the promise was made, as `Module/File.swift:12`.
    public var site: String {
        "\(fileID):\(line)"
    }

    /// One line: the type, the site, the context and the age (the virtual one when there is one).
    public var description: String {
        var line = "\(type) made at \(site)"
        if let context { line += " on \(context)" }
        if let virtualAge {
            line += ", \(Self.describe(virtualAge)) ago in virtual time"
        } else {
            line += ", \(Self.describe(age)) ago"
        }
        if isCancelRequested { line += " (cancel requested)" }
        return line
    }

    /// A duration as people read it: `350 ms`, `2.5 s`, `30 s`, `12 min`.
    static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if seconds < 60 {
            let tenths = milliseconds / 100
            return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
        }
        if seconds < 3600 { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }
}

/// The root promises still pending, oldest first: what ``PendingPromiseTracking/report()``
/// returns.
public struct PendingPromiseReport: Sendable, Hashable, CustomStringConvertible {
    /// The pending promises, oldest first.
    public var promises: [PendingPromise]
    /// The tracking's sampling interval when the report was taken: 1 when every root promise is
    /// recorded, N when one in N is (the report then lists about one pending promise in N), 0
    /// when tracking is off (nothing made since it went off is listed).
    public var samplingInterval: Int

    /// Creates a report; the tracking makes them.
    public init(promises: [PendingPromise], samplingInterval: Int) {
        self.promises = promises
        self.samplingInterval = samplingInterval
    }

    /// A header line, then one line per promise.
    public var description: String {
        var header = "\(promises.count) pending promise\(promises.count == 1 ? "" : "s")"
        if samplingInterval > 1 { header += " (one in \(samplingInterval) recorded)" }
        if samplingInterval == 0 { header += " (tracking is off)" }
        return ([header] + promises.map { "  \($0)" }).joined(separator: "\n")
    }
}
