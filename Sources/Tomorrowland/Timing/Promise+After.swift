import Foundation

extension Promise {
    /// A promise fulfilled with `value` after `delay` seconds: a cancellable timer.
    ///
    /// The timer runs on `context`'s executor (`.immediate` means `.auto` as evaluated now,
    /// `.nowOr(x)` means `x`), and the promise is fulfilled there. A cancel request before then
    /// cancels the promise at once (before `requestCancel()` returns), stops the timer, and
    /// releases `value`.
    ///
    /// - Parameters:
    ///   - context: Where the timer runs. Defaults to `.auto`.
    ///   - value: The value.
    ///   - delay: The wait, in seconds.
    public init(on context: PromiseContext = .auto, fulfilled value: Value, after delay: TimeInterval) {
        self.init(on: context, with: .value(value), after: Duration(timeInterval: delay))
    }

    /// A promise rejected with `error` after `delay` seconds: a cancellable timer.
    ///
    /// Same rules as ``init(on:fulfilled:after:)-(_,_,TimeInterval)``.
    public init(on context: PromiseContext = .auto, rejected error: Error, after delay: TimeInterval) {
        self.init(on: context, with: .error(error), after: Duration(timeInterval: delay))
    }

    /// A promise that gets `result` after `delay` seconds, even `.cancelled`: a cancellable
    /// timer.
    ///
    /// Same rules as ``init(on:fulfilled:after:)-(_,_,TimeInterval)``.
    public init(on context: PromiseContext = .auto, with result: PromiseResult<Value, Error>, after delay: TimeInterval)
    {
        self.init(on: context, with: result, after: Duration(timeInterval: delay))
    }

    /// A promise that gets `result` after `delay` seconds.
    @available(*, deprecated, renamed: "init(on:with:after:)")
    public init(on context: PromiseContext = .auto, result: PromiseResult<Value, Error>, after delay: TimeInterval) {
        self.init(on: context, with: result, after: Duration(timeInterval: delay))
    }

    /// A promise fulfilled with `value` after `delay`: a cancellable timer.
    ///
    /// The `Duration` form of ``init(on:fulfilled:after:)-(_,_,TimeInterval)``.
    public init(on context: PromiseContext = .auto, fulfilled value: Value, after delay: Duration) {
        self.init(on: context, with: .value(value), after: delay)
    }

    /// A promise rejected with `error` after `delay`: a cancellable timer.
    ///
    /// The `Duration` form of ``init(on:rejected:after:)-(_,_,TimeInterval)``.
    public init(on context: PromiseContext = .auto, rejected error: Error, after delay: Duration) {
        self.init(on: context, with: .error(error), after: delay)
    }

    /// A promise that gets `result` after `delay`: a cancellable timer.
    ///
    /// The `Duration` form of ``init(on:with:after:)-(_,_,TimeInterval)``. The timer runs on
    /// `context`'s executor; a cancel request cancels the promise at once, stops the timer and
    /// releases `result`.
    public init(on context: PromiseContext = .auto, with result: PromiseResult<Value, Error>, after delay: Duration) {
        let box = PromiseBox<Value, Error>()
        self.init(box: box)
        let timer = PromiseTimer(on: context)
        // The handler holds `box` until `box` resolves (which releases the handler).
        box.addCancelHandler(
            .inline {
                timer.cancel()
                box.resolve(.cancelled)
            })
        // The result is handed to the destination with the promise it resolves; the timer
        // releases it when cancelled.
        let delivered = UnsafeTransfer(result)
        // A timer its executor discards (a shut-down loop) ends the promise cancelled.
        timer.arm(after: delay) { firing in
            box.resolve(firing == .due ? delivered.wrapped : .cancelled)
        }
    }
}
