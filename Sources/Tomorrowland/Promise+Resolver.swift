extension Promise {
    /// Settles a promise: fulfils, rejects or cancels it, and answers cancel requests.
    ///
    /// The first of fulfil, reject, cancel or resolve wins; later calls do nothing. If every
    /// resolver of a promise is dropped unresolved, the promise is cancelled once nothing else
    /// refers to it.
    public struct Resolver {
        @usableFromInline
        let box: PromiseBox<Value, Error>

        @inlinable
        init(box: PromiseBox<Value, Error>) {
            self.box = box
        }

        /// Fulfils the promise with `value`.
        @inlinable
        public func fulfill(with value: Value) {
            box.resolve(.value(value))
        }

        /// Rejects the promise with `error`.
        @inlinable
        public func reject(with error: Error) {
            box.resolve(.error(error))
        }

        /// Cancels the promise.
        @inlinable
        public func cancel() {
            box.resolve(.cancelled)
        }

        /// Resolves the promise with `result`.
        @inlinable
        public func resolve(with result: PromiseResult<Value, Error>) {
            box.resolve(result)
        }

        /// Resolves the promise with the result of `promise`, when it has one.
        ///
        /// If `promise` is already resolved, this resolves before returning, on the calling
        /// thread; otherwise on the thread that resolves `promise`, with no context hop. Cancel
        /// requests on this resolver's promise propagate to `promise`, as a child's would.
        public func resolve(with promise: Promise<Value, Error>) {
            // A resolved promise ignores later resolutions (A2). Adopting anyway would make it a
            // propagating observer of `promise` that never asks for cancellation, so `promise`
            // could never again be cancelled automatically (found by the model tests). A
            // resolution racing this check can still slip through; that only costs the same
            // pin, never a wrong result.
            guard !box.isResolved else { return }
            CallbackDrain.run(box.adopt(promise.box))
        }

        /// Registers `callback` to run on `context` when cancellation of the promise is requested.
        ///
        /// If a cancel was already requested (or the promise was cancelled), `callback` runs at
        /// once: inline for `.immediate` and `.nowOr(_:)`, asynchronously for other contexts. If
        /// the promise has a value or an error, `callback` never runs. A callback dispatched to a
        /// context other than `.immediate` is skipped when a value or error arrives first.
        ///
        /// - Note: `callback` is released once the promise resolves, wherever that happens.
        @preconcurrency
        public func onRequestCancel(on context: PromiseContext, _ callback: @escaping @Sendable (Resolver) -> Void) {
            box.addCancelHandler(
                .user(
                    context,
                    UserCancelHandler { core in
                        // A cancel handler is invoked with the core it was added to, this box.
                        callback(Resolver(box: unsafeDowncast(core, to: PromiseBox<Value, Error>.self)))
                    }))
        }

        /// Whether cancellation was requested, or the promise was cancelled.
        ///
        /// False once the promise has a value or an error, even if a cancel had been requested.
        @inlinable
        public var hasRequestedCancel: Bool {
            box.hasRequestedCancel
        }
    }
}

/// The box behind it is thread-safe: CoreInvariants: "Fields read without the lock".
extension Promise.Resolver: @unchecked Sendable where Value: Sendable, Error: Sendable {}

extension Promise.Resolver where Error: Swift.Error {
    /// Resolves the promise with the outcome of a `Swift.Result`.
    @inlinable
    public func resolve(with result: Result<Value, Error>) {
        box.resolve(PromiseResult(result))
    }
}

extension Promise.Resolver where Error == Swift.Error {
    /// Resolves the promise with `result`, its error upcast to `Swift.Error`.
    @inlinable
    public func resolve<E: Swift.Error>(with result: PromiseResult<Value, E>) {
        box.resolve(result.mapError { $0 as Swift.Error })
    }

    /// Returns a completion handler of the `(Value?, Error?)` shape that resolves the promise.
    ///
    /// A non-nil value fulfils (any error is then ignored); otherwise a non-nil error cancels if
    /// `isCancelError` says so and rejects if not; both nil rejects with
    /// ``PromiseCallbackError/apiMismatch``.
    @preconcurrency
    public func handleCallback(
        isCancelError: @escaping @Sendable (Error) -> Bool = { _ in false }
    ) -> @Sendable (Value?, Error?) -> Void {
        let box = self.box
        return { value, error in
            if let value {
                box.resolve(.value(value))
            } else if let error {
                box.resolve(isCancelError(error) ? .cancelled : .error(error))
            } else {
                box.resolve(.error(PromiseCallbackError.apiMismatch))
            }
        }
    }
}
