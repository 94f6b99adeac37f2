import Logging
import TomorrowlandTestSupport

/// The server's log lines with the virtual instant each was written at, so that a test can say
/// when the server decided something ("idle timeout, closing" at exactly 5 s).
final class LogRecorder: Sendable {
    /// One line of the log.
    struct Line: Sendable {
        var time: Duration
        var level: Logger.Level
        var message: String
    }

    private let clock: @Sendable () -> Duration
    private let lines = Recorder<Line>()

    /// A recorder that stamps each line with `clock` (the network's virtual time).
    init(clock: @escaping @Sendable () -> Duration) {
        self.clock = clock
    }

    /// Every line so far, in order.
    var all: [Line] { lines.values }

    /// The instants of the lines whose message is `message`, in order.
    func times(of message: String) -> [Duration] {
        all.filter { $0.message == message }.map(\.time)
    }

    /// A `LogHandler` that writes into this recorder, at every level.
    var handler: some LogHandler { Handler(recorder: self) }

    fileprivate func record(_ level: Logger.Level, _ message: String) {
        let line = Line(time: clock(), level: level, message: message)
        lines.record(line)
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        func log(event: LogEvent) {
            recorder.record(event.level, event.message.description)
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
    }
}
