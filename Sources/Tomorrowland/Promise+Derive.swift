/// How a derived promise settles once its callback ran.
@usableFromInline
enum Settlement<Value, Error> {
    /// With this result.
    case result(PromiseResult<Value, Error>)
    /// With the result of this promise, when it has one (piped, propagating cancel requests).
    case adopt(Promise<Value, Error>)
}

extension Promise {
    /// Creates a promise whose result comes from `handler` when this one resolves.
    ///
    /// - Parameter propagatingCancel: Whether the new promise counts as a propagating observer
    ///   of this one (D3).
    @inlinable
    func derive<U, F>(propagatingCancel: Bool, _ handler: @escaping PromiseCore.Handler) -> Promise<U, F> {
        let child = DerivedBox<PromiseResult<U, F>>(handler: handler)
        // Registered before it gets its handle: see `deriveCallback(on:storing:…)`.
        if propagatingCancel {
            seal.withCore { $0.registerNewChild(child) }
        } else {
            seal.withCore { $0.register(child) }
        }
        return Promise<U, F>(box: child)
    }

    /// Creates a propagating child whose callback runs on `context`.
    ///
    /// - Parameters:
    ///   - token: Suppresses the callback if invalidated between now and when it would run; the
    ///     child then settles with `whenSuppressed(result)`.
    ///   - passThrough: The child's result when the callback does not apply to the upstream
    ///     result (settled on the resolving thread, no context hop), or `nil` when it applies.
    ///   - callback: The user's closure, consumed: every callback family takes its closure
    ///     `consuming` and passes it on with `consume`, so that the box ends up with the only
    ///     reference (B7; see ``deriveCallback(on:storing:whenSuppressed:passThrough:propagatingCancel:body:)``).
    ///   - propagatingCancel: Whether the new promise counts as a propagating observer of this
    ///     one (D3); true for every family but `onCancel`.
    ///   - body: Runs `callback` on `context` and says how the child settles.
    ///
    /// Always inlined into the callback families: `whenSuppressed`, `passThrough` and `body` are
    /// then known functions, so the handler closure captures nothing and needs no allocation
    /// (context, callback and token guard live in the ``CallbackBox``).
    @inlinable
    @inline(__always)
    consuming func deriveCallback<U, F, Callback>(
        on context: PromiseContext,
        token: PromiseInvalidationToken?,
        whenSuppressed: @escaping (PromiseResult<Value, Error>) -> PromiseResult<U, F>,
        passThrough: @escaping (PromiseResult<Value, Error>) -> PromiseResult<U, F>?,
        callback: consuming Callback,
        propagatingCancel: Bool = true,
        body: @escaping (Callback, PromiseResult<Value, Error>) -> Settlement<U, F>
    ) -> Promise<U, F> {
        // B10: while propagation is on, the callback keeps the context current here. Off, this
        // is one load and a predictable branch.
        if _slowPath(CallbackContextPropagation.isOn) {
            // Inlined like the other kinds, so that the handler still captures nothing: passed to
            // a function out of line, `whenSuppressed`, `passThrough` and `body` became closure
            // values the handler captured, one more allocation per link.
            let storage = ContextCarryingCallback(
                callback: consume callback, tokenGuard: token.guardNow,
                capturedContext: CallbackContextPropagation.captureCurrent())
            return deriveCallback(
                on: context, storing: consume storage, whenSuppressed: whenSuppressed, passThrough: passThrough,
                propagatingCancel: propagatingCancel, body: body)
        }
        if let tokenGuard = token.guardNow {
            return deriveCallback(
                on: context, storing: GuardedCallback(callback: consume callback, tokenGuard: tokenGuard),
                whenSuppressed: whenSuppressed, passThrough: passThrough, propagatingCancel: propagatingCancel,
                body: body)
        }
        return deriveCallback(
            on: context, storing: PlainCallback(callback: consume callback),
            whenSuppressed: whenSuppressed, passThrough: passThrough, propagatingCancel: propagatingCancel, body: body)
    }

    /// ``deriveCallback(on:token:whenSuppressed:passThrough:callback:body:)`` for one way of
    /// storing the callback.
    ///
    /// `storage` is consumed, as the callback families consume the user's closure: once the
    /// child is registered, its callback may run on `context` and be released there before this
    /// returns, so the box must hold the only reference by then. A reference lent for the call
    /// (the default convention) would be released by the caller after the call returns, on the
    /// registering thread, and be the last one (B7).
    @inlinable
    @inline(__always)
    consuming func deriveCallback<U, F, Storage: CallbackStorage>(
        on context: PromiseContext,
        storing storage: consuming Storage,
        whenSuppressed: @escaping (PromiseResult<Value, Error>) -> PromiseResult<U, F>,
        passThrough: @escaping (PromiseResult<Value, Error>) -> PromiseResult<U, F>?,
        propagatingCancel: Bool,
        body: @escaping (Storage.Callback, PromiseResult<Value, Error>) -> Settlement<U, F>
    ) -> Promise<U, F> {
        typealias Box = CallbackBox<PromiseResult<U, F>, Storage>
        let child = Box(context: context, storage: consume storage) { child, source, stage in
            // CoreInvariants: "Handler stages and outcomes": a handler is only ever called with its own box as `child`.
            let child = unsafeDowncast(child, to: Box.self)
            /// The `.run` stage: runs the callback, on its context.
            @inline(__always)
            func runCallback(handingOver: Bool) -> HandlerOutcome {
                let result = PromiseBox<Value, Error>.resolvedResult(of: source)
                if let tokenGuard = child.withStorage({ $0.pointee.tokenGuard }), !tokenGuard.isValid {
                    // Released here, on the callback's context (B7).
                    child.clearStorage()
                    return .settled(child.settle(whenSuppressed(result)))
                }
                // The callback runs borrowed from the box, and is released right after it ran, on
                // its context (B7), before the box settles; `releaseStorageAfterRun()` calls no
                // release for a closure that holds no reference.
                // B10: the callback runs with the context of its registration, if it kept one.
                // `carriesContext` is a constant here: the plain kinds call `body` directly.
                let settlement = child.withStorage { storage in
                    Storage.carriesContext
                        ? storage.pointee.runInCapturedContext { body(storage.pointee.callback, result) }
                        : body(storage.pointee.callback, result)
                }
                child.releaseStorageAfterRun()
                switch settlement {
                case .result(let settled):
                    // `.run`: whoever called holds the box while its callbacks run (see
                    // `HandlerOutcome.settledInPlace`), so the list takes no reference to it.
                    return handingOver
                        ? .settledHandingOver(child.settleHandingOver(settled))
                        : .settledInPlace(child.settleInPlace(settled))
                case .adopt(let promise):
                    return .settled(child.adoptAfterCallback(promise.box))
                }
            }
            switch stage {
            case .arrive, .arriveHandingOver:
                if child.isAdopting {
                    // The promise the callback returned resolved (see `adoptAfterCallback(_:)`):
                    // `source` is that promise, of the child's own type.
                    return .settled(child.settle(PromiseBox<U, F>.resolvedResult(of: source)))
                }
                let result = PromiseBox<Value, Error>.resolvedResult(of: source)
                if let passed = passThrough(result) {
                    child.clearStorage()
                    if case .arriveHandingOver = stage { return .settledHandingOver(child.settleHandingOver(passed)) }
                    return .settled(child.settle(passed))
                }
                // From a drain, an `.immediate` callback runs here, in this call, with
                // `isExecutingNow` false as an asynchronous trigger wants it (B4): the route
                // `.dispatch` would take to the same place, less a second handler call.
                // `.arrive` may be a synchronous trigger, which keeps the caller's flag: it
                // takes that route.
                if case .arriveHandingOver = stage, child.context.isImmediate {
                    return ExecutionFlags.with(isExecutingNow: false) { runCallback(handingOver: true) }
                }
                // This handler captures nothing, so it may submit the job itself (see
                // `HandlerOutcome.submitted`): the executor is then borrowed from the box.
                return child.submitOrDispatch(onExecutorOf: child.context, source: source, stage: stage)
            case .run:
                return runCallback(handingOver: false)
            case .abandon:
                // Released here, on the thread that learnt the callback will never run.
                child.clearStorage()
                return .settled(child.settle(.cancelled))
            }
        }
        // Registered before the child gets its handle, so that the handle takes over the
        // reference the allocation returned (wrapping it first and registering it after cost a
        // retain and a release of the child), and on the upstream borrowed from this promise's handle
        // (reading `box` retained and released it around the call): two retain/release pairs per
        // link (W1). Nothing can tell the difference: no one can reach the child before this
        // returns.
        if propagatingCancel {
            seal.withCore { $0.registerNewChild(child) }
            // This value was the last copy of its promise (a chain, `promise = promise.map { … }`):
            // its handle becomes the child's, one allocation and one free less per link.
            if isKnownUniquelyReferenced(&seal) {
                // Both references move: the allocation's to the handle (`consume child`), this
                // value's handle to the returned value (`consume self`); a copy of either would be
                // a retain and a release per link.
                seal.retarget(to: consume child)
                return Promise<U, F>(seal: (consume self).seal)
            }
        } else {
            seal.withCore { $0.register(child) }
        }
        return Promise<U, F>(box: child)
    }

    /// A propagating child whose result is `transform(result)`, settled inline on the resolving
    /// thread (error upcasts).
    @inlinable
    func convert<U, F>(_ transform: @escaping (PromiseResult<Value, Error>) -> PromiseResult<U, F>) -> Promise<U, F> {
        derive(propagatingCancel: true) { child, source, _ in
            .settled(
                // CoreInvariants: "Handler stages and outcomes": a handler is only ever called with its own box as `child`.
                unsafeDowncast(child, to: PromiseBox<U, F>.self).settle(
                    transform(PromiseBox<Value, Error>.resolvedResult(of: source))))
        }
    }
}

/// Pass-through rules shared by the families (the callback outcome table of the BehaviourRules
/// article). Each family pairs the function it passes as `passThrough` with what its body
/// unwraps: CoreInvariants: "Pass-through pairing".
@usableFromInline
enum PassThrough {
    /// Applies to values; errors and cancellation pass through.
    @inlinable
    static func unlessValue<V, E, U>(_ result: PromiseResult<V, E>) -> PromiseResult<U, E>? {
        switch result {
        case .value: return nil
        case .error(let error): return .error(error)
        case .cancelled: return .cancelled
        }
    }

    /// Applies to errors; values and cancellation pass through.
    @inlinable
    static func unlessError<V, E, F>(_ result: PromiseResult<V, E>) -> PromiseResult<V, F>? {
        switch result {
        case .value(let value): return .value(value)
        case .error: return nil
        case .cancelled: return .cancelled
        }
    }

    /// Applies to values; errors (upcast) and cancellation pass through.
    @inlinable
    static func unlessValueUpcasting<V, E: Swift.Error, U>(
        _ result: PromiseResult<V, E>
    ) -> PromiseResult<U, Swift.Error>? {
        switch result {
        case .value: return nil
        case .error(let error): return .error(error)
        case .cancelled: return .cancelled
        }
    }

    /// Applies always.
    @inlinable
    static func never<V, E, U, F>(_ result: PromiseResult<V, E>) -> PromiseResult<U, F>? {
        nil
    }

    /// The result unchanged (suppressed observers).
    @inlinable
    static func same<V, E>(_ result: PromiseResult<V, E>) -> PromiseResult<V, E> {
        result
    }

    /// Cancelled (suppressed transforms).
    @inlinable
    static func cancelled<V, E, U, F>(_ result: PromiseResult<V, E>) -> PromiseResult<U, F> {
        .cancelled
    }
}

extension Promise where Error: Swift.Error {
    /// This promise with its error upcast, for adoption by a `Swift.Error` promise.
    @inlinable
    var upcastForAdoption: Promise<Value, Swift.Error> {
        convert { $0.mapError { $0 as Swift.Error } }
    }
}
