import Tomorrowland

/// How a test registers a callback with respect to an invalidation token.
enum TokenUse: String, CaseIterable, Sendable, CustomStringConvertible {
    /// No token at all.
    case none
    /// A token that stays valid.
    case valid
    /// A token invalidated after registration and before the promise resolves (E1/E2).
    case invalidated

    var description: String { rawValue }

    /// The token to pass at registration. It does not invalidate on deinit, so its lifetime in
    /// the test does not matter.
    func makeToken() -> PromiseInvalidationToken? {
        self == .none ? nil : PromiseInvalidationToken(invalidateOnDeinit: false)
    }

    /// Called between registration and resolution: invalidates the token if asked to.
    func applyBeforeResolution(_ token: PromiseInvalidationToken?) {
        if self == .invalidated { token?.invalidate() }
    }

    /// Whether a callback that applies to the outcome is allowed to run.
    var allowsCallback: Bool { self != .invalidated }
}

/// The result a child that passes its parent's outcome through ends with, for a parent settled
/// by `Resolver.settle(_:)` with error type `String`.
func passedThrough(_ outcome: Outcome) -> String {
    switch outcome {
    case .value: "value(42)"
    case .error: "error(bad)"
    case .cancelled: "cancelled"
    }
}

/// The same for a `StdPromise` parent (rejected with `TestError.boom`).
func passedThroughStd(_ outcome: Outcome) -> String {
    switch outcome {
    case .value: "value(42)"
    case .error: "error(boom)"
    case .cancelled: "cancelled"
    }
}
