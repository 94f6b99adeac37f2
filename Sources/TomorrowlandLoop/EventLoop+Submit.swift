import Tomorrowland

extension EventLoop {
    /// Runs `body` on the loop's thread, soon, and returns a promise of what it returns.
    ///
    /// Safe from any thread. `body` runs like work given to ``execute(_:)``: in submission order,
    /// never inside this call (from the loop's own thread it runs after the task in progress, in
    /// the same tick). The promise is fulfilled on the loop's thread as `body` returns, so
    /// callbacks registered on `.loop(self)` run in the same tick.
    ///
    /// ```swift
    /// let open = loop.submit { connections.count }  // Promise<Int, NoError>
    /// ```
    ///
    /// A loop that is shut down never runs `body`: submitted after shutdown, or still queued when
    /// shutdown gave up on queued work, `body` is released without running and the promise is
    /// **cancelled** (no crash, no promise left pending). Requesting cancellation of the promise
    /// does not stop `body`: once submitted, it runs if the loop runs it.
    ///
    /// `Value` is `Sendable`: the result leaves the loop's thread for wherever the promise is
    /// observed. For a result that is not, resolve a promise yourself on the loop:
    /// `Promise(on: .loop(loop)) { resolver in … }`.
    ///
    /// This overloads the executor's ``submit(_:)->()``, which returns nothing. For a closure
    /// that returns `Void`, Swift picks that one unless the promise's type is spelled:
    /// `let done: Promise<Void, NoError> = loop.submit { … }`.
    ///
    /// - Parameter body: The work, run on the loop's thread; its result fulfils the promise.
    /// - Returns: A promise fulfilled with `body`'s result, or cancelled if the loop never runs
    ///   `body`.
    @preconcurrency
    public func submit<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Promise<Value, NoError> {
        let (promise, resolver) = Promise<Value, NoError>.makeWithResolver()
        // If the loop releases the closure without running it, the holder goes with it and
        // cancels the promise: that is the shutdown outcome.
        let holder = CancellingResolver(resolver)
        submitForPromise {
            holder.resolver.fulfill(with: body())
        }
        return promise
    }

    /// Runs a throwing `body` on the loop's thread, soon, and returns a promise of its result.
    ///
    /// The same as ``submit(_:)->Promise<Value,NoError>``, except that an error thrown by
    /// `body` rejects the promise. After shutdown the promise is cancelled, never rejected.
    ///
    /// ```swift
    /// let port = loop.submit {
    ///     try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in … }.localPort
    /// }  // Promise<UInt16, any Error>
    /// ```
    ///
    /// - Parameter body: The work, run on the loop's thread.
    /// - Returns: A promise fulfilled with `body`'s result, rejected with what it throws, or
    ///   cancelled if the loop never runs `body`.
    @preconcurrency
    public func submit<Value: Sendable>(
        _ body: @escaping @Sendable () throws -> Value
    ) -> Promise<Value, any Error> {
        let (promise, resolver) = Promise<Value, any Error>.makeWithResolver()
        let holder = CancellingResolver(resolver)
        submitForPromise {
            do {
                holder.resolver.fulfill(with: try body())
            } catch {
                holder.resolver.reject(with: error)
            }
        }
        return promise
    }

    /// Queues `work` that only resolves a promise, unless the loop is shut down: then `work` is
    /// released at once, so the promise it would resolve is cancelled.
    ///
    /// The one place this file queues work. It uses the loop's quiet `submitOnLoop(_:)` rather
    /// than ``execute(_:)``: the cancelled promise is the report, so no diagnostic line is due.
    /// Queued, never run inline: `body` must not run inside the caller's `submit`.
    private func submitForPromise(_ work: @escaping @Sendable () -> Void) {
        submitOnLoop(work)
    }
}
