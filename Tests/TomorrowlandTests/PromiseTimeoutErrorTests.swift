// Parked outside every target: `PromiseTimeoutError` (Sources/Tomorrowland/Timing/PromiseTimeoutError.swift) comes with the time issue.
// Move this file into Tests/TomorrowlandTests when the type exists.
import Foundation
import Testing
import Tomorrowland

/// `PromiseTimeoutError` conformances and `errorUserInfo` (§1.8).
@Suite("PromiseTimeoutError")
struct PromiseTimeoutErrorTests {
    @Test("equality and hashing compare the case and the wrapped error")
    func equatableAndHashable() {
        typealias TimeoutError = PromiseTimeoutError<String>
        #expect(TimeoutError.timedOut == .timedOut)
        #expect(TimeoutError.rejected("a") == .rejected("a"))
        #expect(TimeoutError.rejected("a") != .rejected("b"))
        #expect(TimeoutError.timedOut != .rejected("a"))
        let set: Set<TimeoutError> = [.timedOut, .timedOut, .rejected("a"), .rejected("a"), .rejected("b")]
        #expect(set.count == 3)
    }

    @Test("timedOut carries a failure reason")
    func timedOutUserInfo() {
        let info = PromiseTimeoutError<String>.timedOut.errorUserInfo
        #expect(info[NSLocalizedFailureReasonErrorKey] is String)
    }

    @Test("rejected with a Swift.Error carries its description and the underlying error")
    func rejectedWithSwiftError() {
        let info = PromiseTimeoutError<Swift.Error>.rejected(TestError.boom).errorUserInfo
        #expect(info[NSLocalizedDescriptionKey] as? String == TestError.boom.localizedDescription)
        #expect(info[NSUnderlyingErrorKey] != nil)
    }

    @Test("rejected with a non-error value carries its description as the failure reason")
    func rejectedWithOtherValue() {
        let info = PromiseTimeoutError<String>.rejected("gone").errorUserInfo
        #expect(info[NSLocalizedFailureReasonErrorKey] as? String == "gone")
    }
}
