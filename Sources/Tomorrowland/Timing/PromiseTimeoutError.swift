import Foundation

/// The error of a promise returned by ``Promise/timeout(on:delay:)-7x0kk``: the
/// upstream's own error, or the timeout.
///
/// - Important: `@unchecked Sendable` because `Swift.Error` requires `Sendable` while `Error` is
///   unconstrained (Tomorrowland's API, e.g. `PromiseTimeoutError<String>`). The payload is the
///   upstream's error, which already crossed threads inside its promise; sending it on is no
///   new sharing.
public enum PromiseTimeoutError<Error>: Swift.Error, CustomNSError, @unchecked Sendable {
    /// The upstream promise did not resolve in time.
    case timedOut
    /// The upstream promise was rejected with this error.
    case rejected(Error)

    /// A description for `NSError` bridging.
    ///
    /// `.timedOut` gives a failure reason saying the operation timed out. `.rejected(e)` gives
    /// `e`'s localized description and `e` as the underlying error when `e` is a `Swift.Error`,
    /// and otherwise a failure reason of `String(describing: e)`.
    public var errorUserInfo: [String: Any] {
        switch self {
        case .timedOut:
            return [NSLocalizedFailureReasonErrorKey: "The operation timed out."]
        case .rejected(let error):
            if let error = error as? Swift.Error {
                return [
                    NSLocalizedDescriptionKey: error.localizedDescription,
                    NSUnderlyingErrorKey: error as NSError,
                ]
            }
            return [NSLocalizedFailureReasonErrorKey: String(describing: error)]
        }
    }
}

extension PromiseTimeoutError where Error: Equatable {
    /// Whether both are `.timedOut`, or both `.rejected` with equal errors.
    public static func == (lhs: PromiseTimeoutError, rhs: PromiseTimeoutError) -> Bool {
        switch (lhs, rhs) {
        case (.timedOut, .timedOut): return true
        case let (.rejected(a), .rejected(b)): return a == b
        default: return false
        }
    }

    /// Whether the two differ.
    public static func != (lhs: PromiseTimeoutError, rhs: PromiseTimeoutError) -> Bool {
        !(lhs == rhs)
    }
}

extension PromiseTimeoutError: Equatable where Error: Equatable {}

extension PromiseTimeoutError: Hashable where Error: Hashable {
    /// Hashes a discriminator (0 for `.timedOut`, 1 for `.rejected`) and the rejected error.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .timedOut:
            hasher.combine(0)
        case .rejected(let error):
            hasher.combine(1)
            hasher.combine(error)
        }
    }
}
