extension Promise {
    /// Runs `attempt` until its promise is fulfilled, at most `attempts` times, waiting `backoff`
    /// between attempts.
    ///
    /// The returned promise is fulfilled with the first value. An attempt that is rejected is
    /// followed by another one, after `backoff.delay(afterAttempt:)`, unless it was the last or
    /// `shouldRetry` says no: the returned promise is then rejected with that attempt's error.
    /// An attempt that is cancelled ends the retrying: the returned promise is cancelled.
    ///
    /// Cancellation: a cancel request on the returned promise stops at once. During a wait, the
    /// timer is cancelled and the returned promise is cancelled before `requestCancel()`
    /// returns. During an attempt, the request reaches the attempt's promise as a propagating
    /// observer's (as through `flatMap`): the attempt is cancelled if nothing else observes it,
    /// no further attempt starts, and the returned promise is cancelled once the attempt
    /// resolves, unless the attempt is fulfilled anyway, whose value is kept.
    ///
    /// Timers run on `context`'s executor (a loop timer on an event loop, a virtual timer on a
    /// test loop, a Dispatch timer on Dispatch contexts).
    ///
    /// ```swift
    /// let page = Promise<Data, Swift.Error>.retry(
    ///     on: .loop(loop), attempts: 4,
    ///     backoff: .exponential(initial: .milliseconds(100), maximum: .seconds(2))
    /// ) { _ in fetchPage() }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `attempt` and `shouldRetry` run. The first attempt starts as
    ///     `Promise(on:_:)` starts its handler (inline for `.immediate` and `.nowOr(_:)`); an
    ///     attempt after a wait starts on the context's executor when the timer fires (for
    ///     `.immediate`, that is `.auto` as evaluated now); an attempt after no wait starts
    ///     where the failure was handled, on `context`.
    ///   - attempts: The most attempts to make, 1 or more.
    ///   - backoff: The wait after each failed attempt. Defaults to no wait.
    ///   - shouldRetry: Decides, on `context`, whether an error is worth another attempt.
    ///     Defaults to always.
    ///   - attempt: Starts attempt number `attemptNumber` (1, 2, …), on `context`, and returns
    ///     its promise.
    /// - Returns: The promise of the first success, or of the last failure.
    @preconcurrency
    public static func retry(
        on context: PromiseContext,
        attempts: Int,
        backoff: PromiseRetryBackoff = .immediate,
        shouldRetry: @escaping @Sendable (Error) -> Bool = { _ in true },
        _ attempt: @escaping @Sendable (_ attemptNumber: Int) -> Promise<Value, Error>
    ) -> Promise<Value, Error> {
        precondition(attempts >= 1, "Promise.retry: attempts is \(attempts); pass 1 or more (1 means no retry)")
        let driver = RetryDriver(
            context: context, attempts: attempts, backoff: backoff, shouldRetry: shouldRetry, operation: attempt)
        let promise = Promise(box: driver.box)
        driver.start()
        return promise
    }
}
