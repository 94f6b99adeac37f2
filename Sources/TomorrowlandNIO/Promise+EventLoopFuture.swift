#if NIO
    import NIOCore
    import Tomorrowland

    // Bridges between Tomorrowland promises and NIO futures, both ways.

    extension Promise where Value: Sendable, Error == any Swift.Error {
        /// A promise with the result of a NIO future: its value, or its error.
        ///
        /// A future that fails with ``PromiseCancelledError`` gives a cancelled promise, so that a
        /// promise that crossed into NIO and back keeps its cancellation.
        ///
        /// A NIO future cannot be cancelled. Requesting cancellation of the returned promise
        /// (`requestCancel()`, directly or by propagation) cancels the promise at once; the work
        /// behind the future goes on, and its result, when it comes, is dropped.
        ///
        /// The promise is resolved on the future's loop thread, with no extra hop; its callbacks
        /// run on the contexts they name (`.nio(future.eventLoop)` to stay on the loop).
        ///
        /// - Parameters:
        ///   - future: The future; any loop, any thread.
        ///   - fileID: Where the promise is made, for `PendingPromiseTracking`; leave the default.
        ///   - line: The line it is made on, as `fileID`.
        public init(_ future: EventLoopFuture<Value>, fileID: StaticString = #fileID, line: UInt = #line) {
            let (promise, resolver) = Promise.makeWithResolver(fileID: fileID, line: line)
            resolver.onRequestCancel(on: .immediate) { $0.cancel() }
            future.whenComplete { result in
                switch result {
                case .success(let value): resolver.fulfill(with: value)
                case .failure(is PromiseCancelledError): resolver.cancel()
                case .failure(let error): resolver.reject(with: error)
                }
            }
            self = promise
        }
    }

    extension Promise where Value: Sendable, Error: Swift.Error {
        /// A NIO future on `eventLoop` with this promise's result.
        ///
        /// The future succeeds with the promise's value, fails with its error, or fails with
        /// ``PromiseCancelledError`` if the promise is cancelled. NIO runs the future's callbacks on
        /// `eventLoop`'s thread, as for any future of that loop.
        ///
        /// The future counts as an observer of this promise for automatic cancellation, one that
        /// never asks for it (a NIO future cannot be cancelled): while it waits, cancel requests
        /// from the promise's other observers do not cancel the promise. Cancel the promise
        /// itself (its `requestCancel()`, or a resolver) to fail the future with
        /// ``PromiseCancelledError``.
        ///
        /// - Parameter eventLoop: The loop the future belongs to.
        /// - Returns: A future completed when this promise resolves, from whichever thread resolves
        ///   it (NIO hops to `eventLoop` if that is another thread).
        public func eventLoopFuture(on eventLoop: any EventLoop) -> EventLoopFuture<Value> {
            let nioPromise = eventLoop.makePromise(of: Value.self)
            nioPromise.completeWith(self)
            return nioPromise.futureResult
        }
    }

    extension EventLoopPromise where Value: Sendable {
        /// Completes this NIO promise with a Tomorrowland promise's result, when it has one.
        ///
        /// The counterpart of NIO's `completeWith(_ future:)`: succeeds with the promise's value,
        /// fails with its error, or fails with ``PromiseCancelledError`` if it is cancelled. Counts
        /// as an observer of `promise` that never requests cancellation, as
        /// ``Tomorrowland/Promise/eventLoopFuture(on:)`` does.
        ///
        /// - Parameter promise: The promise whose result completes this one.
        public func completeWith<Failure: Swift.Error>(_ promise: Promise<Value, Failure>) {
            // `.immediate`: completed on the resolving thread; NIO hops to the future's loop itself
            // when that is another thread, and does not when it is the loop's.
            promise.always(on: .immediate) { result in
                switch result {
                case .value(let value): self.succeed(value)
                case .error(let error): self.fail(error)
                case .cancelled: self.fail(PromiseCancelledError())
                }
            }
        }
    }
#endif
