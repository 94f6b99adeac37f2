import Tomorrowland

/// Runs `body` with a new ``TestLoop`` and fails unless the loop ends with nothing pending.
///
/// The scoped form of ``TestLoop/checkNoPendingWork()``: a test written inside it cannot forget
/// the check. When `body` returns, ready work or a timer still pending on the loop (a timer nobody
/// cancelled, a callback nobody ran) throws a ``TestLoopFailure`` that says what is left; a test
/// that leaves work pending on purpose says so with ``TestLoop/expectPendingWorkAtEnd()``.
///
/// ```swift
/// @Test func slowRequestsTimeOut() throws {
///     try withTestLoop { loop in
///         let (request, _) = Promise<String, Swift.Error>.makeWithResolver()
///         let guarded = request.timeout(on: .loop(loop), delay: .seconds(30))
///         loop.advance(by: .seconds(30))
///         #expect(guarded.result?.error is PromiseTimeoutError<Swift.Error>)
///     }
/// }
/// ```
///
/// The failure is thrown, not recorded with a testing framework, so the function works in Swift
/// Testing and XCTest alike and this module depends on neither.
///
/// - Important: Write at least one `try` outside a macro's arguments in `body`, as in
///   `let value = try loop.expectValue(of: promise)`. The compiler decides whether a closure
///   throws from the `try`s it sees before expanding macros, so a body whose only `try` is inside
///   `#expect(try …)` is taken as non-throwing and fails to compile ("errors thrown from here are
///   not handled").
///
/// `body` runs on the calling thread, before this returns; the loop runs work only when `body`
/// drives it. The loop is not shut down at the end: what is left pending stays unrun and is
/// released with the loop.
///
/// - Parameter body: The test, given the loop.
/// - Returns: What `body` returns.
/// - Throws: The error `body` throws (the loop is not checked then), or a ``TestLoopFailure``
///   for work left pending (or, after ``TestLoop/expectPendingWorkAtEnd()``, for none left).
public func withTestLoop<Result>(_ body: (TestLoop) throws -> Result) throws -> Result {
    let loop = TestLoop()
    let scope = loop.makePendingPromiseScope()
    let result = try PendingPromiseScope.$current.withValue(scope) { try body(loop) }
    try loop.checkEndOfScope(scope)
    return result
}

/// Runs the asynchronous `body` with a new ``TestLoop`` and fails unless the loop ends with nothing
/// pending; see ``withTestLoop(_:)``.
///
/// For tests that await tasks or actors on the loop. `body` runs in the caller's isolation.
///
/// - Parameters:
///   - isolation: The caller's isolation, inherited; do not pass it.
///   - body: The test, given the loop.
/// - Returns: What `body` returns.
/// - Throws: The error `body` throws (the loop is not checked then), or a ``TestLoopFailure``
///   for work left pending (or, after ``TestLoop/expectPendingWorkAtEnd()``, for none left).
public func withTestLoop<Result>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestLoop) async throws -> Result
) async throws -> Result {
    let loop = TestLoop()
    let scope = loop.makePendingPromiseScope()
    let result = try await PendingPromiseScope.$current.withValue(scope) { try await body(loop) }
    try loop.checkEndOfScope(scope)
    return result
}

extension TestLoop {
    /// Tells ``withTestLoop(_:)`` that this test leaves work pending at its end on purpose, so
    /// that it checks the opposite: something must still be pending.
    ///
    /// For tests whose subject is work that does not run (a timer that is never due, work left
    /// queued to show that nothing runs until the loop is driven). Outside ``withTestLoop(_:)``
    /// this changes nothing; ``checkNoPendingWork()`` ignores it. Safe from any thread.
    public func expectPendingWorkAtEnd() {
        state.withLock { $0.expectsPendingWorkAtEnd = true }
    }

    /// The check at the end of ``withTestLoop(_:)``, whose promises were made in `scope`.
    func checkEndOfScope(_ scope: PendingPromiseScope) throws(TestLoopFailure) {
        let (expectsPendingWork, pending) = state.withLock { state in
            (state.expectsPendingWorkAtEnd, state.core.pendingCount)
        }
        guard expectsPendingWork else { return try checkNoPendingWork(naming: scope) }
        guard pending > 0 else {
            throw TestLoopFailure(
                "TestLoop was expected to end with pending work (expectPendingWorkAtEnd()), but nothing is pending (now is \(now)): remove the expectation, or check what ran"
            )
        }
    }
}

extension TestLoop {
    /// The scope ``withTestLoop(_:)`` binds while its body runs: the promises made in it are aged
    /// by this loop's virtual clock, read without the loop's lock (a promise may be made under it).
    func makePendingPromiseScope() -> PendingPromiseScope {
        PendingPromiseScope { [weak self] in
            Duration(schedulingNanoseconds: self?.publishedTime.load(ordering: .relaxed) ?? 0)
        }
    }

    /// What the failure for pending work adds about the promises of `scope`: those still pending
    /// with their sites and virtual ages, or how to get them named.
    static func pendingPromisesClause(in scope: PendingPromiseScope) -> String {
        guard PendingPromiseTracking.isOn else {
            return
                " To name the promises still pending and where they were made, set \(PendingPromiseTracking.environmentVariable)=1 or call PendingPromiseTracking.start()."
        }
        let pending = PendingPromiseTracking.pending(in: scope)
        guard !pending.isEmpty else { return " No promise recorded in this scope is pending." }
        let sampled =
            PendingPromiseTracking.samplingInterval > 1
            ? " (one in \(PendingPromiseTracking.samplingInterval) recorded)" : ""
        return "\nPromises made in this scope and still pending\(sampled), oldest first:\n"
            + pending.map { "  \($0)" }.joined(separator: "\n")
    }
}
