/// A promise seen from code running on a loop: callbacks registered through it run on that loop
/// and may capture state that is not `Sendable`.
///
/// Get one with ``Promise/isolated(to:)`` while running on the loop. Every callback runs on the
/// loop (as with `.loop(loop)`), never inline, so a closure that captures the loop's own
/// non-`Sendable` state is only ever called on the thread that owns that state:
///
/// ```swift
/// loop.execute {
///     let session = Session()                      // not Sendable, lives on the loop
///     fetch().isolated(to: loop)
///         .map { session.decode($0) }              // runs on the loop
///         .then { session.store($0) }
/// }
/// ```
///
/// The type is deliberately not `Sendable`: it stays in the loop's code. Call ``promise`` to get
/// the plain promise back.
///
/// - Important: Closures are released on the loop after they run. A closure that never runs
///   (its promise dies unresolved elsewhere, or a token suppresses it) may be released on another
///   thread: captured objects must tolerate being destroyed there.
public struct IsolatedPromise<Value, Error> {
    /// The underlying promise.
    public let promise: Promise<Value, Error>
    /// The loop the callbacks run on.
    public let executor: any SerialPromiseExecutor

    init(promise: Promise<Value, Error>, executor: any SerialPromiseExecutor) {
        self.promise = promise
        self.executor = executor
    }

    /// The context every callback of this view runs on.
    var context: PromiseContext { .executor(executor) }

    /// Checks the caller runs on the loop; then the closures it registers may be handed over.
    private func checked(_ what: String) -> PromiseContext {
        executor.preconditionIsCurrent("IsolatedPromise.\(what)")
        return context
    }

    /// Runs `onSuccess` on the loop with the value, if the promise is fulfilled.
    ///
    /// - Precondition: Called on the loop.
    @discardableResult
    public func then(
        token: PromiseInvalidationToken? = nil, _ onSuccess: @escaping (Value) -> Void
    ) -> IsolatedPromise<Value, Error> {
        // UnsafeTransfer: the closure is created and registered on the loop (checked), and only
        // ever called by work the loop runs (the context is the loop).
        let body = UnsafeTransfer(onSuccess)
        return IsolatedPromise(
            promise: promise.then(on: checked("then"), token: token) { body.wrapped($0) }, executor: executor)
    }

    /// Runs `transform` on the loop with the value and resolves the returned promise with what it
    /// returns; errors and cancellation pass through.
    ///
    /// - Precondition: Called on the loop.
    public func map<U>(
        token: PromiseInvalidationToken? = nil, _ transform: @escaping (Value) -> U
    ) -> IsolatedPromise<U, Error> {
        let body = UnsafeTransfer(transform)  // as in `then`
        return IsolatedPromise<U, Error>(
            promise: promise.map(on: checked("map"), token: token) { body.wrapped($0) }, executor: executor)
    }

    /// Runs `transform` on the loop with the value and resolves the returned promise with the
    /// promise it returns; errors and cancellation pass through.
    ///
    /// - Precondition: Called on the loop.
    public func flatMap<U>(
        token: PromiseInvalidationToken? = nil, _ transform: @escaping (Value) -> Promise<U, Error>
    ) -> IsolatedPromise<U, Error> {
        let body = UnsafeTransfer(transform)  // as in `then`
        return IsolatedPromise<U, Error>(
            promise: promise.flatMap(on: checked("flatMap"), token: token) { body.wrapped($0) }, executor: executor)
    }

    /// Runs `onError` on the loop with the error, if the promise is rejected.
    ///
    /// - Precondition: Called on the loop.
    @discardableResult
    public func `catch`(
        token: PromiseInvalidationToken? = nil, _ onError: @escaping (Error) -> Void
    ) -> IsolatedPromise<Value, Error> {
        let body = UnsafeTransfer(onError)  // as in `then`
        return IsolatedPromise(
            promise: promise.catch(on: checked("catch"), token: token) { body.wrapped($0) }, executor: executor)
    }

    /// Runs `onComplete` on the loop with the result, whatever it is.
    ///
    /// - Precondition: Called on the loop.
    @discardableResult
    public func always(
        token: PromiseInvalidationToken? = nil, _ onComplete: @escaping (PromiseResult<Value, Error>) -> Void
    ) -> IsolatedPromise<Value, Error> {
        let body = UnsafeTransfer(onComplete)  // as in `then`
        return IsolatedPromise(
            promise: promise.always(on: checked("always"), token: token) { body.wrapped($0) }, executor: executor)
    }
}

extension Promise {
    /// This promise seen from code running on `executor`: callbacks registered through the
    /// result run on `executor` and may capture non-`Sendable` state of the loop.
    ///
    /// - Precondition: The calling thread runs `executor`'s work (an `EventLoop`'s thread inside
    ///   its work, or a `TestLoop` being driven). Off the loop this stops the program: hop to the
    ///   loop first, or use the ordinary `@Sendable` callbacks with `.loop(loop)`.
    public func isolated(to executor: some SerialPromiseExecutor) -> IsolatedPromise<Value, Error> {
        executor.preconditionIsCurrent("Promise.isolated(to:)")
        return IsolatedPromise(promise: self, executor: executor)
    }
}

/// Not `Sendable`, on purpose: the view and the closures given to it belong to the loop's code.
@available(*, unavailable, message: "IsolatedPromise stays on its loop; pass its `promise` instead")
extension IsolatedPromise: Sendable {}
