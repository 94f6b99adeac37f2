#if NIO
    /// The error an `EventLoopFuture` fails with when the promise it was made from is cancelled.
    ///
    /// NIO futures have a value or an error, no third outcome, so a cancelled promise crosses into
    /// NIO as this error: from ``Tomorrowland/Promise/eventLoopFuture(on:)`` and
    /// `EventLoopPromise.completeWith(_:)`. Going back, a future that fails with this error becomes
    /// a cancelled promise again in ``Tomorrowland/Promise/init(_:fileID:line:)``, so a promise that travels
    /// through NIO and back keeps its cancellation.
    ///
    /// In NIO code, test for it with `error is PromiseCancelledError`.
    public struct PromiseCancelledError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The error for a cancelled promise.
        public init() {}

        /// A short description for logs.
        public var description: String {
            "PromiseCancelledError: the promise was cancelled"
        }
    }
#endif
