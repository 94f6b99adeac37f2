/// A ``PromiseExecutor`` that runs one item at a time and knows exactly when the calling thread
/// runs its work: an `EventLoop` or a `TestLoop`.
///
/// On such an executor, work it runs is mutually exclusive with every other work it runs, so
/// state touched only there needs no lock and may be non-`Sendable`. ``LoopBound`` and
/// ``Promise/isolated(to:)`` build on that, checking ``PromiseExecutor/isCurrent`` at run time.
///
/// - Important: Conform only executors for which both hold: work never runs concurrently with
///   other work of the same executor, and ``PromiseExecutor/isCurrent`` is `true` exactly while
///   the calling thread runs the executor's work (never "maybe"). A Dispatch queue does not
///   qualify: a global queue is concurrent, and a serial queue cannot tell reliably.
public protocol SerialPromiseExecutor: PromiseExecutor {}

extension SerialPromiseExecutor {
    /// Stops the program unless the calling thread runs this executor's work.
    ///
    /// - Parameter what: What needed the executor, for the message (for example
    ///   `"LoopBound.value"`).
    public func preconditionIsCurrent(
        _ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
    ) {
        precondition(
            isCurrent,
            "\(what()) used off its loop: run this code on the loop (inside loop.execute { }, a callback on .loop(loop), or an actor pinned to the loop)",
            file: file, line: line)
    }
}
