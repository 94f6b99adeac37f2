import Tomorrowland
internal import TomorrowlandScheduling

extension TestLoop {
    /// Drives the loop until `promise` resolves and returns its result.
    ///
    /// Runs the loop's work in its usual order, advancing the virtual clock to each timer, and
    /// returns at the end of the round in which the promise resolved, as `EventLoop`'s
    /// `run(until:)` returns at the end of its tick: the work due at that virtual time has run
    /// (callbacks the resolution queued on this loop included), timers due later have not, and
    /// ``now`` is the virtual time at which the promise resolved. Returns at once, running
    /// nothing, if the promise is already resolved. Work runs on the calling thread.
    ///
    /// After ``shutdown()`` (before this call, or by work it runs) this returns the promise's
    /// result if it has one, and throws otherwise.
    ///
    /// Resolution must come from this loop's work. A promise that waits on other threads (a
    /// Dispatch context) is resolved by them, not by driving this loop: wait for it otherwise.
    ///
    /// - Parameters:
    ///   - promise: The promise to wait for.
    ///   - timeLimit: How much virtual time may pass; nil for no limit. On failure the clock is
    ///     left at the limit.
    ///   - maxSteps: How many items may run; guards against work that never goes idle.
    /// - Returns: The promise's result.
    /// - Throws: ``TestLoopFailure`` when the promise can never resolve (the loop went idle, or
    ///   is shut down, with the promise pending) or does not within the limits, saying which and
    ///   when.
    public func run<Value, Error>(
        until promise: Promise<Value, Error>, timeLimit: Duration? = nil, maxSteps: Int = 1_000_000
    ) throws(TestLoopFailure) -> PromiseResult<Value, Error> {
        let start = state.withLock { $0.core.currentTime }
        let limit = timeLimit.map { limit in
            let (sum, overflow) = start.addingReportingOverflow(limit.schedulingNanoseconds)
            return overflow ? UInt64.max : sum
        }
        let outcome = drain(maxSteps: maxSteps, limit: limit, until: { promise.result != nil })
        if let result = promise.result { return result }
        let pending = "\(Value.self), \(Error.self)"
        switch outcome {
        case .stopped:
            // `shouldStop` saw a result; results never go away.
            preconditionFailure("unreachable: the promise resolved")
        case .idle:
            throw TestLoopFailure(
                "Promise<\(pending)> can never resolve on this TestLoop: the loop went idle at \(now) with the promise still pending"
            )
        case .reachedTimeLimit:
            throw TestLoopFailure(
                "Promise<\(pending)> did not resolve within \(timeLimit ?? .zero) of virtual time (now is \(now)); \(pendingSummary)"
            )
        case .reachedStepLimit:
            throw TestLoopFailure(
                "Promise<\(pending)> did not resolve within \(maxSteps) steps (now is \(now)): work keeps coming; \(pendingSummary)"
            )
        case .shutDown:
            throw TestLoopFailure(
                "Promise<\(pending)> can never resolve on this TestLoop: the loop is shut down (now is \(now)) with the promise still pending"
            )
        }
    }

    /// Drives the loop until `promise` resolves (see ``run(until:timeLimit:maxSteps:)``) and
    /// returns its value.
    ///
    /// - Throws: ``TestLoopFailure`` naming what happened instead: the error it was rejected
    ///   with, its cancellation, or why it never resolved.
    @discardableResult
    public func expectValue<Value, Error>(
        of promise: Promise<Value, Error>, timeLimit: Duration? = nil
    ) throws(TestLoopFailure) -> Value {
        let result = try run(until: promise, timeLimit: timeLimit)
        if case .value(let value) = result { return value }
        throw TestLoopFailure(
            "Expected the promise to be fulfilled with a value, but it \(Self.describe(result)) at \(now)")
    }

    /// Drives the loop until `promise` resolves (see ``run(until:timeLimit:maxSteps:)``) and
    /// returns the error it was rejected with.
    ///
    /// - Throws: ``TestLoopFailure`` naming what happened instead: the value it was fulfilled
    ///   with, its cancellation, or why it never resolved.
    @discardableResult
    public func expectError<Value, Error>(
        of promise: Promise<Value, Error>, timeLimit: Duration? = nil
    ) throws(TestLoopFailure) -> Error {
        let result = try run(until: promise, timeLimit: timeLimit)
        if case .error(let error) = result { return error }
        throw TestLoopFailure(
            "Expected the promise to be rejected with an error, but it \(Self.describe(result)) at \(now)")
    }

    /// Drives the loop until `promise` resolves (see ``run(until:timeLimit:maxSteps:)``) and
    /// checks that it was cancelled.
    ///
    /// - Throws: ``TestLoopFailure`` naming what happened instead: the value or error it
    ///   resolved with, or why it never resolved.
    public func expectCancellation<Value, Error>(
        of promise: Promise<Value, Error>, timeLimit: Duration? = nil
    ) throws(TestLoopFailure) {
        let result = try run(until: promise, timeLimit: timeLimit)
        if case .cancelled = result { return }
        throw TestLoopFailure("Expected the promise to be cancelled, but it \(Self.describe(result)) at \(now)")
    }

    /// "was fulfilled with 42", "was rejected with boom", "was cancelled".
    private static func describe<Value, Error>(_ result: PromiseResult<Value, Error>) -> String {
        switch result {
        case .value(let value): return "was fulfilled with \(String(reflecting: value))"
        case .error(let error): return "was rejected with \(String(reflecting: error))"
        case .cancelled: return "was cancelled"
        }
    }

    /// What is pending, for failure messages.
    private var pendingSummary: String {
        let (ready, timers, next) = state.withLock { state in
            (state.core.readyCount, state.core.timerCount, state.core.nextTimerDeadline)
        }
        var summary = "\(ready) ready item(s) and \(timers) timer(s) pending"
        if let next { summary += ", the next due at \(Duration(schedulingNanoseconds: next))" }
        return summary
    }
}
