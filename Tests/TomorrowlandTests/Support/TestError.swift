/// The `Swift.Error` the tests reject `StdPromise`s with.
enum TestError: Error, Equatable, Sendable {
    case boom
    case other
    case thrown
}

/// The three ways a promise can end, for tests that run every callback family against each.
enum Outcome: String, CaseIterable, Sendable, CustomStringConvertible {
    case value
    case error
    case cancelled

    var description: String { rawValue }
}
