extension Promise {
    /// Runs `onSuccess` on `context` with the value, if the promise is fulfilled.
    ///
    /// - Parameters:
    ///   - context: Where `onSuccess` runs. Defaults to `.auto`.
    ///   - token: If invalidated before `onSuccess` runs, `onSuccess` is skipped.
    ///   - onSuccess: Receives the value, on `context`.
    /// - Returns: A new promise with this promise's result, resolved after `onSuccess` ran.
    @inlinable
    @preconcurrency
    public consuming func then(
        on context: PromiseContext = .auto, token: PromiseInvalidationToken? = nil,
        _ onSuccess: consuming @escaping @Sendable (Value) -> Void
    ) -> Promise<Value, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.same, passThrough: PassThrough.unlessValue,
            callback: consume onSuccess
        ) { onSuccess, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessValue` lets only a value reach this.
            onSuccess(result.value.unsafelyUnwrapped)
            return .result(result)
        }
    }

    /// Runs `onError` on `context` with the error, if the promise is rejected.
    ///
    /// - Parameters:
    ///   - context: Where `onError` runs. Defaults to `.auto`.
    ///   - token: If invalidated before `onError` runs, `onError` is skipped.
    ///   - onError: Receives the error, on `context`.
    /// - Returns: A new promise with this promise's result, resolved after `onError` ran.
    @inlinable
    @discardableResult
    @preconcurrency
    public consuming func `catch`(
        on context: PromiseContext = .auto, token: PromiseInvalidationToken? = nil,
        _ onError: consuming @escaping @Sendable (Error) -> Void
    ) -> Promise<Value, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.same, passThrough: PassThrough.unlessError,
            callback: consume onError
        ) { onError, result in
            // CoreInvariants: "Pass-through pairing": `PassThrough.unlessError` lets only an error reach this.
            onError(result.error.unsafelyUnwrapped)
            return .result(result)
        }
    }

    /// Runs `onComplete` on `context` with the result, whatever it is.
    ///
    /// - Parameters:
    ///   - context: Where `onComplete` runs. Defaults to `.auto`.
    ///   - token: If invalidated before `onComplete` runs, `onComplete` is skipped.
    ///   - onComplete: Receives the result, on `context`.
    /// - Returns: A new promise with this promise's result, resolved after `onComplete` ran.
    @inlinable
    @discardableResult
    @preconcurrency
    public consuming func always(
        on context: PromiseContext = .auto, token: PromiseInvalidationToken? = nil,
        _ onComplete: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) -> Promise<Value, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.same, passThrough: PassThrough.never,
            callback: consume onComplete
        ) { onComplete, result in
            onComplete(result)
            return .result(result)
        }
    }

    /// Runs `onCancel` on `context` if the promise is cancelled.
    ///
    /// The returned promise does not count as an observer for automatic cancellation until a
    /// cancel is requested on it: then it acts as one that asks for cancellation.
    ///
    /// - Parameters:
    ///   - context: Where `onCancel` runs. Defaults to `.auto`.
    ///   - token: If invalidated before `onCancel` runs, `onCancel` is skipped.
    ///   - onCancel: Runs on `context`.
    /// - Returns: A new promise with this promise's result, resolved after `onCancel` ran.
    @inlinable
    @discardableResult
    @preconcurrency
    public consuming func onCancel(
        on context: PromiseContext = .auto, token: PromiseInvalidationToken? = nil,
        _ onCancel: consuming @escaping @Sendable () -> Void
    ) -> Promise<Value, Error> {
        let upstream = UpstreamReferenceBox(box)
        // The closure lives in the box, which hands it out to be released on `context` (B7).
        let promise: Promise<Value, Error> = deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.same,
            passThrough: { $0.isCancelled ? nil : $0 }, callback: consume onCancel, propagatingCancel: false
        ) { onCancel, result in
            onCancel()
            return .result(result)
        }
        // Counted only at the moment a cancel is requested on the returned promise (D5).
        promise.box.addCancelHandler(
            .inline {
                guard let upstream = upstream.reference.load() else { return }
                upstream.addObserver()
                upstream.removeObserver()
            })
        return promise
    }

    /// Runs `onComplete` on `context` with the result, without creating a promise.
    ///
    /// A tap never takes part in automatic cancellation: it neither keeps the promise from being
    /// cancelled nor asks for it.
    ///
    /// - Parameters:
    ///   - context: Where `onComplete` runs. Defaults to `.auto`.
    ///   - token: If invalidated before `onComplete` runs, `onComplete` is skipped.
    ///   - onComplete: Receives the result, on `context`.
    /// - Returns: This promise.
    @inlinable
    @discardableResult
    @preconcurrency
    public func tap(
        on context: PromiseContext = .auto, token: PromiseInvalidationToken? = nil,
        _ onComplete: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) -> Promise<Value, Error> {
        // B10: while propagation is on, the closure runs with the context current here. Off, this
        // is one load and a predictable branch; the carrying path is out of line.
        if _slowPath(CallbackContextPropagation.isOn) {
            tapCarryingContext(on: context, token: token, consume onComplete)
            return self
        }
        // The first callback of a pending root promise goes into its box's slot (``RootBox``).
        if token == nil, box.firstSlotMayBeFree {
            tapIntoFirstSlot(on: context, consume onComplete)
            return self
        }
        // Consumed into the node, which then holds the only reference (B7, as in `deriveCallback`).
        // Registered on the box borrowed from the handle, which holds it.
        seal.register(TapNode(context: context, tokenGuard: token.guardNow, onComplete: consume onComplete))
        return self
    }

    /// ``tap(on:token:_:)`` without a token, on a box whose slot looked free: fills the slot, or
    /// registers a node if the slot was taken meanwhile (or the promise resolved, or got a
    /// callback). Out of line, so that `tap` stays small enough to inline.
    @inlinable
    @inline(never)
    func tapIntoFirstSlot(
        on context: PromiseContext, _ onComplete: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) {
        let box = self.box
        guard box.lockFirstSlotIfFree() else {
            box.register(TapNode(context: context, tokenGuard: nil, onComplete: consume onComplete))
            return
        }
        // `lockFirstSlotIfFree()` answers true for a `RootBox` only, of this promise's type.
        let root = unsafeDowncast(box, to: RootBox<PromiseResult<Value, Error>>.self)
        root.firstContext = context
        // Consumed into the slot, which then holds the only reference (B7).
        root.firstCallback = consume onComplete
        root.finishFirstSlotLocked()
    }

    /// ``tap(on:token:_:)`` while context propagation is on: `onComplete` runs with the context
    /// current now (B10). The wrapper is consumed into the node, which then holds the only
    /// reference to it (B7).
    @inlinable
    @inline(never)
    func tapCarryingContext(
        on context: PromiseContext, token: PromiseInvalidationToken?,
        _ onComplete: consuming @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) {
        let wrapped = CallbackContextPropagation.carryingCurrentContext(consume onComplete)
        box.register(TapNode(context: context, tokenGuard: token.guardNow, onComplete: consume wrapped))
    }

    /// A new promise with this promise's result that takes no part in automatic cancellation.
    ///
    /// Cancel requests on the returned promise do nothing.
    @inlinable
    public func tap() -> Promise<Value, Error> {
        let child = PromiseBox<Value, Error>()
        let promise = Promise(box: child)
        box.register(child.pipeNode())
        return promise
    }
}

extension Promise where Error == Swift.Error {
    /// Runs a throwing `onSuccess` on `context` with the value, if the promise is fulfilled.
    ///
    /// - Parameters:
    ///   - context: Where `onSuccess` runs. Defaults to `.auto`.
    ///   - token: If invalidated before `onSuccess` runs, `onSuccess` is skipped and the returned
    ///     promise is fulfilled with the value.
    ///   - onSuccess: Receives the value, on `context`. A thrown error rejects the returned promise.
    /// - Returns: A new promise with this promise's result, or the thrown error.
    @inlinable
    @preconcurrency
    public consuming func tryThen(
        on context: PromiseContext = .auto, token: PromiseInvalidationToken? = nil,
        _ onSuccess: consuming @escaping @Sendable (Value) throws -> Void
    ) -> Promise<Value, Error> {
        deriveCallback(
            on: context, token: token, whenSuppressed: PassThrough.same, passThrough: PassThrough.unlessValue,
            callback: consume onSuccess
        ) { onSuccess, result in
            do {
                // CoreInvariants: "Pass-through pairing": `PassThrough.unlessValue` lets only a value reach this.
                try onSuccess(result.value.unsafelyUnwrapped)
                return .result(result)
            } catch {
                return .result(.error(error))
            }
        }
    }
}
