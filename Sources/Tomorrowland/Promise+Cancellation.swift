extension Promise {
    /// Requests cancellation of the promise.
    ///
    /// Advisory: the promise's handlers registered with `onRequestCancel` are told, and decide.
    /// Does nothing if the promise is resolved or a cancel was already requested.
    @inlinable
    public func requestCancel() {
        box.requestCancel()
    }

    /// Something that can request cancellation of this promise without keeping it alive.
    public var cancellable: PromiseCancellable {
        PromiseCancellable(target: box)
    }

    /// Requests cancellation of this promise when `token` is invalidated.
    ///
    /// - Returns: This promise.
    @discardableResult
    public func requestCancelOnInvalidate(_ token: PromiseInvalidationToken) -> Promise<Value, Error> {
        token.requestCancelOnInvalidate(self)
        return self
    }

    /// A new promise with this promise's result that counts as an ordinary propagating observer.
    ///
    /// Use it to hand out a promise whose cancellation (together with every other observer's)
    /// cancels this one. If this promise is resolved, so is the child.
    @inlinable
    public func makeChild() -> Promise<Value, Error> {
        let child = PromiseBox<Value, Error>()
        child.propagateCancel(to: box)
        let promise = Promise(box: child)
        box.register(child.pipeNode())
        return promise
    }

    /// A new promise with this promise's result, through which no cancel request reaches this one.
    ///
    /// From now on, this promise is never cancelled automatically (the returned promise counts
    /// as an observer that never asks for cancellation). It is still cancelled if this one is.
    @inlinable
    public func ignoringCancel() -> Promise<Value, Error> {
        box.addObserver()
        let child = PromiseBox<Value, Error>()
        let promise = Promise(box: child)
        box.register(child.pipeNode())
        return promise
    }

    /// A new promise with this promise's result that runs `cancelRequested` before passing a
    /// cancel request on to this promise.
    ///
    /// The returned promise is sealed at once (it is cancelled automatically as soon as all its
    /// observers ask, even while you hold it) and keeps itself alive until it resolves.
    ///
    /// - Parameters:
    ///   - context: Where `cancelRequested` runs.
    ///   - cancelRequested: Receives the returned promise, on `context`, when a cancel is
    ///     requested on it; the request reaches this promise after it returns.
    /// - Returns: The new promise.
    @preconcurrency
    public func propagatingCancellation(
        on context: PromiseContext, cancelRequested: @escaping @Sendable (_ promise: Promise<Value, Error>) -> Void
    ) -> Promise<Value, Error> {
        let child = PromiseBox<Value, Error>()
        box.addObserver()
        let upstream = UpstreamReferenceBox(box)
        let promise = Promise(box: child)
        let handle = UnsafeTransfer(promise)
        // The handler holds the child (and its handle) until the child resolves: it keeps itself
        // alive, and the handler is released at resolution. `handle` crosses to `context` only
        // to be handed to `cancelRequested`, as Tomorrowland does.
        child.addCancelHandler(
            .user(
                context,
                UserCancelHandler { _ in
                    cancelRequested(handle.wrapped)
                    upstream.reference.load()?.removeObserver()
                }))
        child.seal()
        box.register(child.pipeNode())
        return promise
    }

    /// Calls `handler` with this promise and returns this promise.
    ///
    /// Use it to attach several observers in one expression.
    public func fork(_ handler: (Promise) throws -> Void) rethrows -> Promise {
        try handler(self)
        return self
    }
}

extension Promise where Error: Swift.Error {
    /// This promise with its error upcast to `Swift.Error`, as a propagating child.
    public var upcast: Promise<Value, Swift.Error> {
        convert { $0.mapError { $0 as Swift.Error } }
    }
}

extension Promise where Error == NoError {
    /// This promise as a `Promise<Value, Swift.Error>`.
    ///
    /// As in Tomorrowland, the result pins this promise against automatic cancellation, and a
    /// cancel request on the result is passed straight to this promise, whatever its other
    /// observers.
    public var upcast: Promise<Value, Swift.Error> {
        box.addObserver()
        let upstream = UpstreamReferenceBox(box)
        let promise: Promise<Value, Swift.Error> = derive(propagatingCancel: false) { child, source, _ in
            // CoreInvariants: "Handler stages and outcomes": a handler is only ever called with its own box as `child`.
            let child = unsafeDowncast(child, to: PromiseBox<Value, Swift.Error>.self)
            let result = PromiseBox<Value, NoError>.resolvedResult(of: source)
            switch result {
            case .value(let value): return .settled(child.settle(.value(value)))
            case .cancelled: return .settled(child.settle(.cancelled))
            }
        }
        promise.box.addCancelHandler(.inline { upstream.reference.load()?.requestCancel() })
        return promise
    }
}
