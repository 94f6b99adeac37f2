/// Why a ``TestLoop`` check failed: pending work at the end of a test, a promise that can never
/// resolve, or a promise that resolved with another outcome than expected.
///
/// Thrown by the checking helpers, so that it fails the test under Swift Testing and XCTest
/// alike, with ``description`` as the message.
public struct TestLoopFailure: Error, CustomStringConvertible, Sendable {
    /// What went wrong, naming what did happen.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
