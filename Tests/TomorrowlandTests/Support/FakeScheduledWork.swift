@testable import Tomorrowland

/// A handle an executor returned for armed work, for the timer state machines' tests: only its
/// identity matters.
final class FakeScheduledWork: PromiseScheduledWork {
    func cancel() {}
}
