extension Promise {
    /// Replaces an error with the value `transform` returns, on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the error, on `context`.
    /// - Returns: A new promise that cannot be rejected.
    @inlinable
    @preconcurrency
    public consuming func recover(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Error) -> Value
    ) -> Promise<Value, NoError> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessError,
            callback: consume transform
        ) { transform, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
            .result(.value(transform(result.error.unsafelyUnwrapped)))
        }
    }

    /// Replaces an error with the error `transform` returns, on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the error, on `context`.
    /// - Returns: A new promise rejected with what `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func mapError<E>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Error) -> E
    ) -> Promise<Value, E> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessError,
            callback: consume transform
        ) { transform, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
            .result(.error(transform(result.error.unsafelyUnwrapped)))
        }
    }

    /// Continues with the promise `transform` returns for an error, on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the error, on `context`.
    /// - Returns: A new promise with the result of the promise `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func flatMapError<E>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Error) -> Promise<Value, E>
    ) -> Promise<Value, E> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessError,
            callback: consume transform
        ) { transform, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
            .adopt(transform(result.error.unsafelyUnwrapped))
        }
    }

    /// Replaces an error with the error a throwing `transform` returns, on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the error, on `context`. Rejects the returned promise with the
    ///     error it returns or throws.
    /// - Returns: A new promise whose error is a `Swift.Error`.
    @inlinable
    @preconcurrency
    public consuming func tryMapError<E: Swift.Error>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Error) throws -> E
    ) -> Promise<Value, Swift.Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessError,
            callback: consume transform
        ) { transform, result in
            do {
                // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
                return .result(.error(try transform(result.error.unsafelyUnwrapped)))
            } catch {
                return .result(.error(error))
            }
        }
    }

    /// Continues with the promise a throwing `transform` returns for an error, on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the error, on `context`. A thrown error rejects the returned
    ///     promise; the returned promise's error is upcast to `Swift.Error`.
    /// - Returns: A new promise with the result of the promise `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func tryFlatMapError<E: Swift.Error>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Error) throws -> Promise<Value, E>
    ) -> Promise<Value, Swift.Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessError,
            callback: consume transform
        ) { transform, result in
            do {
                // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
                return .adopt(try transform(result.error.unsafelyUnwrapped).upcastForAdoption)
            } catch {
                return .result(.error(error))
            }
        }
    }
}

extension Promise where Error == Swift.Error {
    /// Replaces an error with the value a throwing `transform` returns, on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the error, on `context`. A thrown error rejects the returned promise.
    /// - Returns: A new promise fulfilled with what `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func tryRecover(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Error) throws -> Value
    ) -> Promise<Value, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessError,
            callback: consume transform
        ) { transform, result in
            do {
                // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
                return .result(.value(try transform(result.error.unsafelyUnwrapped)))
            } catch {
                return .result(.error(error))
            }
        }
    }
}
