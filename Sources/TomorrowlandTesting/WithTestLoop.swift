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
    let result = try body(loop)
    try loop.checkEndOfScope()
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
    let result = try await body(loop)
    try loop.checkEndOfScope()
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

    /// The check at the end of ``withTestLoop(_:)``.
    func checkEndOfScope() throws(TestLoopFailure) {
        let (expectsPendingWork, pending) = state.withLock { state in
            (state.expectsPendingWorkAtEnd, state.core.pendingCount)
        }
        guard expectsPendingWork else { return try checkNoPendingWork() }
        guard pending > 0 else {
            throw TestLoopFailure(
                "TestLoop was expected to end with pending work (expectPendingWorkAtEnd()), but nothing is pending (now is \(now)): remove the expectation, or check what ran"
            )
        }
    }
}
