import Foundation

extension Promise {
    /// A new promise with this promise's result, delivered `delay` seconds after this promise
    /// resolves.
    ///
    /// The timer starts when this promise resolves, on `context`'s executor (`.immediate` means
    /// `.auto` as evaluated now, `.nowOr(x)` means `x`), and the result is delivered there. The
    /// returned promise is a propagating observer: a cancel request on it reaches this promise.
    /// A cancel request does not shorten the wait for a value or an error, but when this
    /// promise was cancelled and a cancel has been (or is later) requested on the returned
    /// promise, the wait is skipped and the returned promise is cancelled at once. Meant mostly
    /// for testing; to build a cancellable timer, use ``init(on:with:after:)-(_,_,TimeInterval)``.
    ///
    /// - Parameters:
    ///   - context: Where the timer runs and the result is delivered. Defaults to `.auto`.
    ///   - delay: The wait after resolution, in seconds.
    /// - Returns: The new promise.
    public func delay(on context: PromiseContext = .auto, _ delay: TimeInterval) -> Promise<Value, Error> {
        self.delay(on: context, Duration(timeInterval: delay))
    }

    /// A new promise with this promise's result, delivered `delay` after this promise resolves.
    ///
    /// The `Duration` form of ``delay(on:_:)-(_,TimeInterval)``, with the same rules.
    public func delay(on context: PromiseContext = .auto, _ delay: Duration) -> Promise<Value, Error> {
        // The destination is fixed now, and an operation queue gets its place in line now.
        let timer = PromiseTimer(on: context)
        let child = PromiseBox<Value, Error>()
        child.propagateCancel(to: box)
        let promise = Promise(box: child)
        box.register(
            ObserverNode(context: .immediate) { source in
                // `child` stays pending for the delay without holding this promise: its link to
                // it goes now (see `UpstreamLink`). A cancel request could not reach a resolved
                // promise anyway.
                child.unlinkUpstream()
                let result = PromiseBox<Value, Error>.resolvedResult(of: source)
                // The result travels to the destination with the promise it resolves.
                let delivered = UnsafeTransfer(result)
                // A timer its executor discards (a shut-down loop) ends the delay cancelled.
                timer.arm(after: delay) { firing in
                    child.resolve(firing == .due ? delivered.wrapped : .cancelled)
                }
                if result.isCancelled {
                    // Runs at once if a cancel was already requested; the handler (and its hold on
                    // `child`) is released when `child` resolves.
                    child.addCancelHandler(
                        .inline {
                            timer.cancel()
                            child.resolve(.cancelled)
                        })
                }
            })
        return promise
    }
}
