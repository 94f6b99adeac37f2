import Foundation
import Synchronization

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
    /// The returned promise is the derived promise itself (registered on this promise with
    /// `context`), so the upstream result takes the ordinary callback path; the timer is
    /// cancelled the moment the upstream resolves. What the timer and the cancel handler share
    /// is one ``TimeoutLink``.
    @inlinable
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
        // The returned promise observes the upstream; it gives the observation up once, by the
        // timeout or by a cancel request (F7).
        upstream.addObserver()
        let promise: Promise<Value, E> = derive(propagatingCancel: false) { child, source, stage in
            switch stage {
            case .arrive:
                timer.cancel()
                // Already settled by the timer: a job would only find it resolved (and would keep
                // the context's executor busy, or alive, for nothing).
                if child.isResolved { return .settled(nil) }
                return .dispatch(context)
            case .run:
                let child = unsafeDowncast(child, to: PromiseBox<Value, E>.self)
                return .settled(child.settle(transform(PromiseBox<Value, Error>.resolvedResult(of: source))))
            case .abandon:
                return .settled(unsafeDowncast(child, to: PromiseBox<Value, E>.self).settle(.cancelled))
            }
        }
        let link = TimeoutLink(child: promise.box, upstream: upstream, timedOut: timedOut, transform: transform)
        promise.box.addCancelHandler(.inline { link.propagateCancel() })
        let fire: PromiseTimer.Work = { firing in
            switch firing {
            case .due: link.timeoutFired()
            case .discarded: link.timerDiscarded()
            }
        }
        if delay <= .zero {
            timer.runNow(on: context, fire)
        } else {
            timer.arm(after: delay, fire)
        }
        return promise
    }
}

/// What a `timeout`'s timer and its cancel handler share: the two promises, held without keeping
/// them alive, and the one-shot cancel request upstream.
///
/// The references are the core's unowned kind (`UnownedReference`), not `weak`, which
/// would give both promises a side table for the rest of their lives.
///
/// - Important: `@unchecked Sendable`: the references are immutable and thread-safe to load,
///   the flag is atomic, and `timedOut` is an error value only read (it travels with the
///   promise it rejects, like any error).
@usableFromInline
final class TimeoutLink<Value, Error, E>: @unchecked Sendable {
    private let child: UnownedReference<PromiseCore>
    private let upstream: UnownedReference<PromiseCore>
    private let hasPropagated = Atomic<Bool>(false)
    private let timedOut: E
    private let transform: @Sendable (PromiseResult<Value, Error>) -> PromiseResult<Value, E>

    @usableFromInline
    init(
        child: PromiseBox<Value, E>, upstream: PromiseBox<Value, Error>, timedOut: E,
        transform: @escaping @Sendable (PromiseResult<Value, Error>) -> PromiseResult<Value, E>
    ) {
        self.child = UnownedReference(child)
        self.upstream = UnownedReference(upstream)
        self.timedOut = timedOut
        self.transform = transform
    }

    deinit {
        child.release()
        upstream.release()
    }

    /// Gives up the returned promise's observation of the upstream, the first time only: a
    /// propagating observer's cancel request (F7).
    @usableFromInline
    func propagateCancel() {
        guard !hasPropagated.exchange(true, ordering: .acquiringAndReleasing) else { return }
        upstream.load()?.removeObserver()
    }

    /// The timer fired (or a zero delay ran): rejects the returned promise with the timeout, or
    /// gives it the upstream result if that arrived meanwhile, then asks the upstream to cancel.
    /// The timer's executor will never run it (it shut down): the returned promise is cancelled,
    /// as every promise waiting on that executor is, unless the upstream's result got there first.
    @usableFromInline
    func timerDiscarded() {
        if let core = child.load() {
            CallbackDrain.run(unsafeDowncast(core, to: PromiseBox<Value, E>.self).settle(.cancelled))
        }
        propagateCancel()
    }

    @usableFromInline
    func timeoutFired() {
        // No returned promise any more: nobody can observe the outcome.
        guard let core = child.load() else { return }
        let child = unsafeDowncast(core, to: PromiseBox<Value, E>.self)
        // The upstream may have resolved after the timer became due but before this ran, its
        // callback still on the way: its result wins.
        if let upstream = upstream.load(),
            let result = unsafeDowncast(upstream, to: PromiseBox<Value, Error>.self).result
        {
            CallbackDrain.run(child.settle(transform(result)))
        } else {
            CallbackDrain.run(child.settle(.error(timedOut)))
        }
        propagateCancel()
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
        makeTimeout(on: context, delay: delay, timedOut: PromiseTimeoutError<Swift.Error>.timedOut) { $0 }
    }
}
