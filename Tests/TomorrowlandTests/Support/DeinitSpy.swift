import Dispatch
import TomorrowlandTestSupport

/// An object that reports its own deinit, and on which queue and thread it happened.
///
/// Captured by a callback closure (and held by nothing else), it tells when and where the
/// library released that closure.
final class DeinitSpy: Sendable {
    /// Where a spy died.
    struct Death: Sendable, Equatable {
        var name: String
        var queueTag: String?
        /// The label of the Dispatch queue that ran the deinit (`com.apple.main-thread` for the
        /// main queue, which under `swift test` on Linux drains on a worker thread).
        var queueLabel: String
    }

    private let name: String
    private let deaths: Recorder<Death>

    init(_ name: String, reportingTo deaths: Recorder<Death>) {
        self.name = name
        self.deaths = deaths
    }

    /// Does nothing; callbacks call it so that they capture the spy.
    func touch() {}

    deinit {
        deaths.record(Death(name: name, queueTag: currentQueueTag, queueLabel: currentDispatchQueueLabel))
    }
}
