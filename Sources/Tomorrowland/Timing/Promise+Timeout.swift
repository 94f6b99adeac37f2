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
    @inlinable
    public func timeout(
        on context: PromiseContext = .nowOr(.auto), delay: TimeInterval
    ) -> Promise<Value, PromiseTimeoutError<Error>> {
        timeout(on: context, delay: Duration(timeInterval: delay))
    }

    /// A new promise that adopts this promise's value or cancellation, or is rejected with
    /// ``PromiseTimeoutError/timedOut`` if this promise has not resolved within `delay`.
    ///
    /// The `Duration` form of ``timeout(on:delay:)-7x0kk``, with the same rules.
    @inlinable
    public func timeout(
        on context: PromiseContext = .nowOr(.auto), delay: Duration
    ) -> Promise<Value, PromiseTimeoutError<Error>> {
        makeTimeout(on: context, delay: delay, mapping: TimeoutRejecting<Value, Error>.self)
    }

    /// The machinery of every `timeout` form.
    ///
    /// The returned promise is a ``TimeoutBox``: a derived promise registered on this promise with
    /// `context`, as a propagating observer, that keeps the timer itself. The upstream result
    /// takes the ordinary callback path, and the timer is cancelled the moment the upstream
    /// resolves. What the executor holds is one ``PromiseTimerHold`` on that box.
    @inlinable
    func makeTimeout<Mapping: TimeoutMapping>(
        on context: PromiseContext, delay: Duration, mapping: Mapping.Type
    ) -> Promise<Value, Mapping.Failure> where Mapping.Value == Value, Mapping.Upstream == Error {
        typealias E = Mapping.Failure
        typealias Box = TimeoutBox<Value, Error, E, Mapping>
        // The handler captures nothing (it reads the box), so it needs no allocation.
        let handler: Box.Handler = { child, source, stage in
            // CoreInvariants: "Handler stages and outcomes": a handler is only ever called with its own box as `child`.
            let child = unsafeDowncast(child, to: Box.self)
            switch stage {
            case .arrive, .arriveHandingOver:
                // Already settled by the timer: a job would only find it resolved (and would keep
                // the context's executor busy, or alive, for nothing).
                if child.upstreamArrived() { return .settled(nil) }
                return child.submitOrDispatch(onExecutorOf: child.context, source: source, stage: stage)
            case .run:
                // Whoever calls `.run` holds the box while its callbacks run (a job's executor, or
                // makes them a list with its own reference): CoreInvariants: "Handler stages and outcomes".
                return .settledInPlace(
                    child.settleInPlace(Mapping.map(PromiseBox<Value, Error>.resolvedResult(of: source))))
            case .abandon:
                return .settled(child.settle(.cancelled))
            }
        }
        let child = Box(context: context, handler: handler)
        // Its cancel request reaches this promise once, through the inline link (F7); so does the
        // timeout, when it fires. This promise's box is borrowed from its handle, which holds it.
        seal.withCore { $0.registerNewChild(child) }
        // The destination is fixed now (`.immediate` is `.auto` as evaluated here), and an
        // operation queue gets its place in line now.
        child.start(after: delay)
        // The handle last, so that it takes over `child`'s reference instead of a new one.
        return Promise<Value, E>(box: child)
    }
}

extension Promise where Error == Swift.Error {
    /// A new promise that adopts this promise's result, or is rejected with
    /// `PromiseTimeoutError<Swift.Error>.timedOut` if this promise has not resolved within `delay`
    /// seconds.
    ///
    /// Rejections pass through unchanged. Otherwise the same rules as the generic
    /// ``timeout(on:delay:)-7x0kk``: the result is delivered on `context`, the timer
    /// runs on `context`'s executor, and the timeout sends one cancel request upstream.
    ///
    /// - Parameters:
    ///   - context: Where the result is delivered and where the timer runs. Defaults to
    ///     `.nowOr(.auto)`.
    ///   - delay: The time allowed, in seconds.
    /// - Returns: The new promise.
    @inlinable
    public func timeout(on context: PromiseContext = .nowOr(.auto), delay: TimeInterval) -> Promise<Value, Swift.Error>
    {
        timeout(on: context, delay: Duration(timeInterval: delay))
    }

    /// A new promise that adopts this promise's result, or is rejected with
    /// `PromiseTimeoutError<Swift.Error>.timedOut` if this promise has not resolved within
    /// `delay`.
    ///
    /// The `Duration` form of ``timeout(on:delay:)-7x0kk``, with the same rules.
    @inlinable
    public func timeout(on context: PromiseContext = .nowOr(.auto), delay: Duration) -> Promise<Value, Swift.Error> {
        makeTimeout(on: context, delay: delay, mapping: TimeoutPassing<Value>.self)
    }
}

/// What a `timeout` makes of its upstream's result, and its rejection when it fires: static, so
/// that the ``TimeoutBox`` stores neither (a closure and an error value).
@usableFromInline
protocol TimeoutMapping {
    /// The promises' value.
    associatedtype Value
    /// The upstream promise's error.
    associatedtype Upstream
    /// The timeout promise's error.
    associatedtype Failure

    /// The timeout promise's result for the upstream's `result`.
    static func map(_ result: PromiseResult<Value, Upstream>) -> PromiseResult<Value, Failure>

    /// The timeout promise's rejection when its timer fires first.
    static var timedOut: Failure { get }
}

/// The generic `timeout`: a rejection `e` becomes ``PromiseTimeoutError/rejected(_:)``.
@usableFromInline
enum TimeoutRejecting<Value, Upstream>: TimeoutMapping {
    /// The value and a cancellation as they are; a rejection `e` as ``PromiseTimeoutError/rejected(_:)``.
    @inlinable
    static func map(_ result: PromiseResult<Value, Upstream>) -> PromiseResult<Value, PromiseTimeoutError<Upstream>> {
        switch result {
        case .value(let value): return .value(value)
        case .error(let error): return .error(.rejected(error))
        case .cancelled: return .cancelled
        }
    }

    /// ``PromiseTimeoutError/timedOut``.
    @inlinable
    static var timedOut: PromiseTimeoutError<Upstream> {
        .timedOut
    }
}

/// The `timeout` of a promise whose error is `Swift.Error`: rejections pass through unchanged.
@usableFromInline
enum TimeoutPassing<Value>: TimeoutMapping {
    /// The upstream's result as it is.
    @inlinable
    static func map(_ result: PromiseResult<Value, any Swift.Error>) -> PromiseResult<Value, any Swift.Error> {
        result
    }

    /// `PromiseTimeoutError<Swift.Error>.timedOut`, boxed only when a timeout fires.
    @inlinable
    static var timedOut: any Swift.Error {
        PromiseTimeoutError<any Swift.Error>.timedOut
    }
}
