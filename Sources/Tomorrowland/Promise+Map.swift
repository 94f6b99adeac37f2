extension Promise {
    /// Transforms the value with `transform` on `context`.
    ///
    /// Errors and cancellation pass through without running `transform`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the value, on `context`.
    /// - Returns: A new promise fulfilled with what `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func map<U>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Value) -> U
    ) -> Promise<U, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessValue,
            callback: consume transform
        ) { transform, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessValue` lets only a value reach this.
            .result(.value(transform(result.value.unsafelyUnwrapped)))
        }
    }

    /// Continues with the promise `transform` returns for the value.
    ///
    /// Errors and cancellation pass through without running `transform`. Cancel requests on the
    /// returned promise reach the promise `transform` returned.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the value, on `context`.
    /// - Returns: A new promise with the result of the promise `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func flatMap<U>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Value) -> Promise<U, Error>
    ) -> Promise<U, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessValue,
            callback: consume transform
        ) { transform, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessValue` lets only a value reach this.
            .adopt(transform(result.value.unsafelyUnwrapped))
        }
    }
}

extension Promise where Error == Swift.Error {
    /// Transforms the value with a throwing `transform` on `context`.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the value, on `context`. A thrown error rejects the returned promise.
    /// - Returns: A new promise fulfilled with what `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func tryMap<U>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Value) throws -> U
    ) -> Promise<U, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessValue,
            callback: consume transform
        ) { transform, result in
            do {
                // CoreInvariants: "Pass-through pairing": `PassThrough.unlessValue` lets only a value reach this.
                return .result(.value(try transform(result.value.unsafelyUnwrapped)))
            } catch {
                return .result(.error(error))
            }
        }
    }

    /// Continues with the promise a throwing `transform` returns for the value.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs.
    ///   - token: If invalidated before `transform` runs, the returned promise is cancelled.
    ///   - transform: Receives the value, on `context`. A thrown error rejects the returned
    ///     promise; the returned promise's error is upcast to `Swift.Error`.
    /// - Returns: A new promise with the result of the promise `transform` returns.
    @inlinable
    @preconcurrency
    public consuming func tryFlatMap<U, E: Swift.Error>(
        on context: PromiseContext, token: PromiseInvalidationToken? = nil,
        _ transform: consuming @escaping @Sendable (Value) throws -> Promise<U, E>
    ) -> Promise<U, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.cancelled, passThrough: PassThrough.unlessValue,
            callback: consume transform
        ) { transform, result in
            do {
                // CoreInvariants: "Pass-through pairing": `PassThrough.unlessValue` lets only a value reach this.
                return .adopt(try transform(result.value.unsafelyUnwrapped).upcastForAdoption)
            } catch {
                return .result(.error(error))
            }
        }
    }
}
