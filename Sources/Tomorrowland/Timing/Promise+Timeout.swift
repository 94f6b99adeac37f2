import Foundation

extension Promise {
    /// A new promise that adopts this promise's value or cancellation, or is rejected with
    /// ``PromiseTimeoutError/timedOut`` if this promise has not resolved within `delay` seconds.
    ///
    /// A rejection `e` of this promise becomes ``PromiseTimeoutError/rejected(_:)``. The result
    /// of this promise is delivered on `context` as the trigger allows: with the default
    /// `.nowOr(.auto)`, an already-resolved promise gives an already-resolved timeout promise.
    /// The timer runs on `context`'s executor (`.immediate` means `.auto`, `.nowOr(x)` means
    /// `x`): a loop timer on an event loop, a virtual one on a test loop. It is cancelled as soon
    /// as this promise resolves.
    ///
    /// When the timeout fires, the returned promise passes one cancel request to this promise,
    /// as a propagating observer does: it is cancelled if nothing else observes it. A cancel
    /// request on the returned promise goes the same one-shot way; the returned promise is then
    /// cancelled when this one is.
    ///
    /// A `delay` of zero or less uses no timer: with `.immediate` or `.nowOr(_:)` the returned
    /// promise is resolved before this returns (with this promise's result if it has one,
    /// otherwise timed out); with other contexts the timeout runs soon on the context, and a
    /// result of this promise that arrives first still wins.
    ///
    /// - Parameters:
    ///   - context: Where the result is delivered and where the timer runs. Defaults to
    ///     `.nowOr(.auto)`.
    ///   - delay: The time allowed, in seconds.
    /// - Returns: The new promise.
    public func timeout(on context: PromiseContext = .nowOr(.auto), delay: TimeInterval) -> Promise<Value, PromiseTimeoutError<Error>> {
        timeout(on: context, delay: Duration(timeInterval: delay))
    }

    /// A new promise that adopts this promise's value or cancellation, or is rejected with
    /// ``PromiseTimeoutError/timedOut`` if this promise has not resolved within `delay`.
    ///
    /// The `Duration` form of ``timeout(on:delay:)-(_,TimeInterval)``, with the same rules.
    public func timeout(on context: PromiseContext = .nowOr(.auto), delay: Duration) -> Promise<Value, PromiseTimeoutError<Error>> {
        makeTimeout(on: context, delay: delay, timedOut: .timedOut) { result in
            switch result {
            case .value(let value): return .value(value)
            case .error(let error): return .error(.rejected(error))
            case .cancelled: return .cancelled
            }
        }
    }

    /// The machinery of every `timeout` form.
    ///
    /// The returned promise is the derived box itself (registered on this promise with
    /// `context`), so the upstream result takes the ordinary callback path; the timer holds it
    /// weakly, and is cancelled the moment the upstream resolves.
    func makeTimeout<E>(
        on context: PromiseContext,
        delay: Duration,
        timedOut: E,
        transform: @escaping @Sendable (PromiseResult<Value, Error>) -> PromiseResult<Value, E>
    ) -> Promise<Value, E> {
        let upstream = box
        // The destination is fixed now (`.immediate` is `.auto` as evaluated here), and an
        // operation queue gets its place in line now.
        let timer = PromiseTimer(on: context)
        // One cancel request upstream, from whichever comes first: the timeout or a cancel
        // request on the returned promise (F7).
        let once = OnceFlag()
        let propagateCancel: @Sendable () -> Void = { [weak upstream] in
            if once.claim() { upstream?.removeObserver() }
        }
        upstream.addObserver()
        let promise: Promise<Value, E> = derive(propagatingCancel: false) { child, source, stage in
            switch stage {
            case .arrive:
                timer.cancel()
                return .dispatch(context)
            case .run:
                let child = unsafeDowncast(child, to: PromiseBox<Value, E>.self)
                return .settled(child.settle(transform(PromiseBox<Value, Error>.resolvedResult(of: source))))
            }
        }
        let child = promise.box
        child.addCancelHandler(.inline(propagateCancel))
        // `timedOut` is an error value only read when the timeout fires; it travels with the
        // promise it rejects, like any error.
        let timedOutError = UnsafeTransfer(timedOut)
        let action: @Sendable () -> Void = { [weak child, weak upstream] in
            // No child: nobody can observe the outcome any more.
            guard let child else { return }
            // The upstream may have resolved after the timer became due but before this ran, its
            // callback still on the way: its result wins.
            if let result = upstream?.result {
                CallbackDrain.run(child.settle(transform(result)))
            } else {
                CallbackDrain.run(child.settle(.error(timedOutError.wrapped)))
            }
            propagateCancel()
        }
        if delay <= .zero {
            timer.runNow(on: context, action)
        } else {
            timer.arm(after: delay, action)
        }
        return promise
    }
}

extension Promise where Error == Swift.Error {
    /// A new promise that adopts this promise's result, or is rejected with
    /// `PromiseTimeoutError<Swift.Error>.timedOut` if this promise has not resolved within `delay`
    /// seconds.
    ///
    /// Rejections pass through unchanged. Otherwise the same rules as the generic
    /// ``timeout(on:delay:)-(_,TimeInterval)``: the result is delivered on `context`, the timer
    /// runs on `context`'s executor, and the timeout sends one cancel request upstream.
    ///
    /// - Parameters:
    ///   - context: Where the result is delivered and where the timer runs. Defaults to
    ///     `.nowOr(.auto)`.
    ///   - delay: The time allowed, in seconds.
    /// - Returns: The new promise.
    public func timeout(on context: PromiseContext = .nowOr(.auto), delay: TimeInterval) -> Promise<Value, Swift.Error> {
        timeout(on: context, delay: Duration(timeInterval: delay))
    }

    /// A new promise that adopts this promise's result, or is rejected with
    /// `PromiseTimeoutError<Swift.Error>.timedOut` if this promise has not resolved within
    /// `delay`.
    ///
    /// The `Duration` form of ``timeout(on:delay:)-(_,TimeInterval)``, with the same rules.
    public func timeout(on context: PromiseContext = .nowOr(.auto), delay: Duration) -> Promise<Value, Swift.Error> {
        makeTimeout(on: context, delay: delay, timedOut: PromiseTimeoutError<Swift.Error>.timedOut) { $0 }
    }
}
