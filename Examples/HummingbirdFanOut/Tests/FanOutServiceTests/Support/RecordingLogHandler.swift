import Logging
import TomorrowlandTestSupport

/// A swift-log handler that keeps every line, with its metadata (the provider's included), for a
/// test to read.
struct RecordingLogHandler: LogHandler {
    /// One logged line.
    struct Line: Sendable {
        let message: String
        let metadata: Logger.Metadata
    }

    /// Where the lines go; shared by the copies swift-log makes of the handler.
    final class Lines: Sendable {
        private let lines = Locked<[Line]>([])

        func append(_ line: Line) { lines.withLock { $0.append(line) } }

        var all: [Line] { lines.withLock { $0 } }
    }

    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        // The provider runs here, on the thread that logs: what it reads is that thread's
        // task-locals (the ServiceContext a promise callback runs with).
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        lines.append(Line(message: event.message.description, metadata: merged))
    }
}
