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

extension DeinitSpy {
    /// `body`, in a closure that also holds a new spy named `name`: the returned closure's
    /// context holds the only reference to the spy, so the spy dies when the closure does.
    ///
    /// A closure literal that captures a spy (`{ [spy = DeinitSpy(…)] _ in … }`) does not do
    /// this in an unoptimised build: there the capture list's binding holds the spy too, until
    /// the statement that registered the closure ends, on the registering thread.
    static func holding<Input, Output>(
        _ name: String, reportingTo deaths: Recorder<Death>,
        _ body: @escaping @Sendable (Input) -> Output
    ) -> @Sendable (Input) -> Output {
        let spy = DeinitSpy(name, reportingTo: deaths)
        return { input in
            spy.touch()
            return body(input)
        }
    }

    /// ``holding(_:reportingTo:_:)`` for a closure without arguments.
    static func holding(_ name: String, reportingTo deaths: Recorder<Death>) -> @Sendable () -> Void {
        let spy = DeinitSpy(name, reportingTo: deaths)
        return { spy.touch() }
    }
}
