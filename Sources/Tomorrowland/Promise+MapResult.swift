extension Promise {
    /// Transforms the result, whatever it is, with `transform` on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the result, on `context`.
    /// - Returns: A new promise with the result `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func mapResult<T, E>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> PromiseResult<T, E>
    ) -> Promise<T, E> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.never,
            callback: consume transform
        ) { transform, result in
            .result(transform(result))
        }
    }

    /// Continues with the promise `transform` returns for the result, whatever it is.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the result, on `context`.
    /// - Returns: A new promise with the result of the promise `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func flatMapResult<T, E>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Promise<T, E>
    ) -> Promise<T, E> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.never,
            callback: consume transform
        ) { transform, result in
            .adopt(transform(result))
        }
    }

    /// Transforms the result with a throwing `transform` on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the result, on `context`. A thrown error rejects the returned
    ///     promise; a returned error is upcast to `Swift.Error`.
    /// - Returns: A new promise with the result `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func tryMapResult<T, E: Swift.Error>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) throws -> PromiseResult<T, E>
    ) -> Promise<T, Swift.Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.never,
            callback: consume transform
        ) { transform, result in
            do {
                return .result(try transform(result).mapError { $0 as Swift.Error })
            } catch {
                return .result(.error(error))
            }
        }
    }

    /// Continues with the promise a throwing `transform` returns for the result.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the result, on `context`. A thrown error rejects the returned
    ///     promise; the returned promise's error is upcast to `Swift.Error`.
    /// - Returns: A new promise with the result of the promise `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func tryFlatMapResult<T, E: Swift.Error>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (PromiseResult<Value, Error>) throws -> Promise<T, E>
    ) -> Promise<T, Swift.Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.never,
            callback: consume transform
        ) { transform, result in
            do {
                return .adopt(try transform(result).upcastForAdoption)
            } catch {
                return .result(.error(error))
            }
        }
    }
}
