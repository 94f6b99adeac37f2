/// A promise paired with an invalidation token, so every callback registered through it uses
/// the token.
///
/// Made with ``Promise/withToken(_:)``. The promises returned by its methods are registered with
/// the token's `requestCancelOnInvalidate`, so invalidating the token suppresses the callbacks
/// and cancels the chain. (Only the first level: a `TokenPromise` derived from another one does
/// not register again, because cancelling the first level propagates.)
public struct TokenPromise<Value, Error> {
    /// The wrapped promise.
    public let inner: Promise<Value, Error>
    /// The token every callback registered through this wrapper uses.
    public let token: PromiseInvalidationToken
    /// Whether this wrapper was made by `withToken`/`init(promise:token:)`: only its direct
    /// children are registered for cancellation on invalidation.
    private let isInitial: Bool

    /// Wraps `promise` with `token`.
    public init(promise: Promise<Value, Error>, token: PromiseInvalidationToken) {
        self.init(promise: promise, token: token, isInitial: true)
    }

    private init(promise: Promise<Value, Error>, token: PromiseInvalidationToken, isInitial: Bool) {
        inner = promise
        self.token = token
        self.isInitial = isInitial
    }

    /// Wraps a promise derived through this wrapper, registering it with the token if this is
    /// the initial wrapper.
    private func derived<U, F>(_ promise: Promise<U, F>) -> TokenPromise<U, F> {
        if isInitial { token.requestCancelOnInvalidate(promise) }
        return TokenPromise<U, F>(promise: promise, token: token, isInitial: false)
    }

    /// Wraps a promise without registering it (taps, `ignoringCancel`).
    private func unregistered<U, F>(_ promise: Promise<U, F>) -> TokenPromise<U, F> {
        TokenPromise<U, F>(promise: promise, token: token, isInitial: false)
    }

    /// ``Promise/then(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func then(
        on context: PromiseContext = .auto, _ onSuccess: consuming @escaping @Sendable (Value) -> Void
    ) -> TokenPromise<Value, Error> {
        derived(inner.then(on: context, token: token, consume onSuccess))
    }

    /// ``Promise/map(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func map<U>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Value) -> U
    ) -> TokenPromise<U, Error> {
        derived(inner.map(on: context, token: token, consume transform))
    }

    /// ``Promise/flatMap(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func flatMap<U>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Value) -> Promise<U, Error>
    ) -> TokenPromise<U, Error> {
        derived(inner.flatMap(on: context, token: token, consume transform))
    }

    /// ``Promise/catch(on:token:_:)`` with this wrapper's token.
    @discardableResult
    @preconcurrency
    public func `catch`(
        on context: PromiseContext = .auto, _ onError: consuming @escaping @Sendable (Error) -> Void
    ) -> TokenPromise<Value, Error> {
        derived(inner.catch(on: context, token: token, consume onError))
    }

    /// ``Promise/recover(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func recover(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Error) -> Value
    ) -> TokenPromise<Value, NoError> {
        derived(inner.recover(on: context, token: token, consume transform))
    }

    /// ``Promise/mapError(on:token:_:)`` — without the token, as in Tomorrowland: `transform` is
    /// never suppressed.
    @preconcurrency
    public func mapError<E>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Error) -> E
    ) -> TokenPromise<Value, E> {
        derived(inner.mapError(on: context, consume transform))
    }

    /// ``Promise/flatMapError(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func flatMapError<E>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Error) -> Promise<Value, E>
    ) -> TokenPromise<Value, E> {
        derived(inner.flatMapError(on: context, token: token, consume transform))
    }

    /// ``Promise/tryMapError(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryMapError<E: Swift.Error>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Error) throws -> E
    ) -> TokenPromise<Value, Swift.Error> {
        derived(inner.tryMapError(on: context, token: token, consume transform))
    }

    /// ``Promise/tryFlatMapError(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryFlatMapError<E: Swift.Error>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Error) throws -> Promise<Value, E>
    ) -> TokenPromise<Value, Swift.Error> {
        derived(inner.tryFlatMapError(on: context, token: token, consume transform))
    }

    /// ``Promise/always(on:token:_:)`` with this wrapper's token.
    @discardableResult
    @preconcurrency
    public func always(
        on context: PromiseContext = .auto,
        _ onComplete: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) -> TokenPromise<Value, Error> {
        derived(inner.always(on: context, token: token, consume onComplete))
    }

    /// ``Promise/mapResult(on:token:_:)`` with this wrapper's token (labelled `onComplete:`, as in
    /// Tomorrowland).
    @preconcurrency
    public func mapResult<T, E>(
        on context: PromiseContext,
        onComplete transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> PromiseResult<T, E>
    ) -> TokenPromise<T, E> {
        derived(inner.mapResult(on: context, token: token, consume transform))
    }

    /// ``Promise/flatMapResult(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func flatMapResult<T, E>(
        on context: PromiseContext,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Promise<T, E>
    ) -> TokenPromise<T, E> {
        derived(inner.flatMapResult(on: context, token: token, consume transform))
    }

    /// ``Promise/tryMapResult(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryMapResult<T, E: Swift.Error>(
        on context: PromiseContext,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) throws -> PromiseResult<T, E>
    ) -> TokenPromise<T, Swift.Error> {
        derived(inner.tryMapResult(on: context, token: token, consume transform))
    }

    /// ``Promise/tryFlatMapResult(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryFlatMapResult<T, E: Swift.Error>(
        on context: PromiseContext,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) throws -> Promise<T, E>
    ) -> TokenPromise<T, Swift.Error> {
        derived(inner.tryFlatMapResult(on: context, token: token, consume transform))
    }

    /// ``Promise/tap(on:token:_:)`` with this wrapper's token.
    @discardableResult
    @preconcurrency
    public func tap(
        on context: PromiseContext = .auto,
        _ onComplete: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) -> TokenPromise<Value, Error> {
        unregistered(inner.tap(on: context, token: token, consume onComplete))
    }

    /// ``Promise/tap()``.
    public func tap() -> TokenPromise<Value, Error> {
        unregistered(inner.tap())
    }

    /// ``Promise/onCancel(on:token:_:)`` with this wrapper's token.
    @discardableResult
    @preconcurrency
    public func onCancel(
        on context: PromiseContext = .auto, _ onCancel: consuming @escaping @Sendable () -> Void
    ) -> TokenPromise<Value, Error> {
        derived(inner.onCancel(on: context, token: token, consume onCancel))
    }

    /// Calls `handler` with this wrapper and returns it.
    public func fork(_ handler: (TokenPromise) throws -> Void) rethrows -> TokenPromise {
        try handler(self)
        return self
    }

    /// ``Promise/ignoringCancel()``, wrapped.
    public func ignoringCancel() -> TokenPromise<Value, Error> {
        unregistered(inner.ignoringCancel())
    }

    /// Unavailable: invalidate the token, or use ``inner``.
    @available(*, unavailable, message: "Invalidate the associated token or use the .promise property instead.")
    public func requestCancel() {
        fatalError()
    }

    /// Unavailable: the wrapper already requests cancellation when its token is invalidated.
    @available(
        *, unavailable, message: "TokenPromise already requests cancellation when its associated token is invalidated."
    )
    @discardableResult
    public func requestCancelOnInvalidate(_ token: PromiseInvalidationToken) -> TokenPromise<Value, Error> {
        fatalError()
    }
}

extension TokenPromise where Error == Swift.Error {
    /// ``Promise/tryThen(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryThen(
        on context: PromiseContext = .auto, _ onSuccess: consuming @escaping @Sendable (Value) throws -> Void
    ) -> TokenPromise<Value, Error> {
        derived(inner.tryThen(on: context, token: token, consume onSuccess))
    }

    /// ``Promise/tryMap(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryMap<U>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Value) throws -> U
    ) -> TokenPromise<U, Error> {
        derived(inner.tryMap(on: context, token: token, consume transform))
    }

    /// ``Promise/tryFlatMap(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryFlatMap<U, E: Swift.Error>(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Value) throws -> Promise<U, E>
    ) -> TokenPromise<U, Error> {
        derived(inner.tryFlatMap(on: context, token: token, consume transform))
    }

    /// ``Promise/tryRecover(on:token:_:)`` with this wrapper's token.
    @preconcurrency
    public func tryRecover(
        on context: PromiseContext, _ transform: consuming @escaping @Sendable (Error) throws -> Value
    ) -> TokenPromise<Value, Error> {
        derived(inner.tryRecover(on: context, token: token, consume transform))
    }
}

extension TokenPromise: Equatable {
    /// Whether both wrap the same promise with the same token.
    public static func == (lhs: TokenPromise, rhs: TokenPromise) -> Bool {
        lhs.inner == rhs.inner && lhs.token == rhs.token
    }
}

extension TokenPromise: Sendable where Value: Sendable, Error: Sendable {}

extension Promise {
    /// This promise wrapped with `token`, so every callback registered through the wrapper uses it.
    public func withToken(_ token: PromiseInvalidationToken) -> TokenPromise<Value, Error> {
        TokenPromise(promise: self, token: token)
    }
}
