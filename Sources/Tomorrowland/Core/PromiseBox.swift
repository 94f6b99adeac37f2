import Synchronization

/// The shared storage of one promise: its state, its result, its callbacks, its cancel handlers
/// and its observer count (automatic cancellation propagation).
///
/// A box is also a ``PromiseCallbackNode``: a promise derived from another one (by `map`, `then`,
/// …) is registered on its upstream as itself, with the work to do stored in ``handler``. That
/// saves one allocation per derived promise.
///
/// - Important: `@unchecked Sendable`: every `var` is guarded by `lock`, except `storedResult`,
///   which is written once under the lock before `status` becomes `.resolved` and never changes
///   afterwards (so it may be read without the lock by anyone who observed `.resolved` under the
///   lock, or got the box handed over by such a thread), and `handler`, which belongs to whoever
///   owns the node (see ``PromiseCallbackNode``).
final class PromiseBox<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    /// The work a derived promise does when its upstream resolves.
    ///
    /// Called first with `.arrive` on the thread that fires the node: it either settles the
    /// child right away (a result that passes through) or asks for the callback to run on a
    /// context. Then, if asked, with `.run` on that context, where it runs the user's closure.
    typealias Handler = (_ child: PromiseBox<Value, Error>, _ source: AnyObject, _ stage: HandlerStage) -> HandlerOutcome

    enum Status: UInt8 {
        /// A `DelayedPromise` whose handler has not started; cancel requests are ignored.
        case delayed
        case pending
        case cancelRequested
        case resolved
    }

    private let lock = Mutex<Void>(())
    private var status: Status
    private var everObserved = false
    private var sealed = false
    private var observerCount: Int32 = 0
    private var storedResult: PromiseResult<Value, Error>?
    private var callbackHead: PromiseCallbackNode?
    private var callbackTail: PromiseCallbackNode?
    private var cancelHandlers: [CancelHandler<Value, Error>] = []
    /// Derived promises only: the work that settles this box from its upstream's result.
    var handler: Handler?

    /// A pending box.
    init(handler: Handler? = nil) {
        status = .pending
        self.handler = handler
    }

    /// A box that is already resolved.
    init(result: PromiseResult<Value, Error>) {
        status = .resolved
        storedResult = result
    }

    /// A box in the delayed state (`DelayedPromise`, `PromiseOperation`).
    init(delayed: Void) {
        status = .delayed
    }

    deinit {
        // Unresolved storage that dies is cancelled: its callbacks see `.cancelled`. Nothing
        // else can reach the box now, so no lock is needed. `self` must not escape a deinit, so
        // the callbacks read their result from a stand-in box.
        guard status != .resolved, let head = callbackHead else { return }
        callbackHead = nil
        callbackTail = nil
        CallbackDrain.run(ReadyCallbacks(source: PromiseBox(result: .cancelled), head: head))
    }

    // MARK: Result

    /// The result, or `nil` while unresolved.
    var result: PromiseResult<Value, Error>? {
        lock.withLock { _ in status == .resolved ? storedResult : nil }
    }

    /// The result of a box known to be resolved (see the type's invariant).
    @inline(__always)
    var resolvedResult: PromiseResult<Value, Error> {
        storedResult.unsafelyUnwrapped
    }

    /// The result of `source`, a resolved box of this type, handed to a callback node.
    @inline(__always)
    static func resolvedResult(of source: AnyObject) -> PromiseResult<Value, Error> {
        unsafeDowncast(source, to: PromiseBox<Value, Error>.self).resolvedResult
    }

    /// Whether a cancel was requested or the promise was cancelled.
    var hasRequestedCancel: Bool {
        lock.withLock { _ in
            switch status {
            case .cancelRequested: return true
            case .resolved: return storedResult?.isCancelled ?? false
            case .pending, .delayed: return false
            }
        }
    }

    // MARK: Resolving

    /// Resolves the box if it is not resolved yet and returns its callbacks, ready to run.
    ///
    /// - Returns: `nil` when the box was already resolved (first resolution wins) or has no
    ///   callbacks. The caller must run what it gets (``CallbackDrain``), or return it to a drain.
    func settle(_ result: PromiseResult<Value, Error>) -> ReadyCallbacks? {
        let taken: (PromiseCallbackNode?, [CancelHandler<Value, Error>])? = lock.withLock { _ in
            guard status != .resolved else { return nil }
            storedResult = result
            status = .resolved
            let head = callbackHead
            callbackHead = nil
            callbackTail = nil
            let handlers = cancelHandlers
            cancelHandlers = []
            return (head, handlers)
        }
        // The cancel handlers are released here, outside the lock: they may hold resolvers of
        // this very box (a deliberate cycle, broken now).
        guard let (head, _) = taken, let head else { return nil }
        return ReadyCallbacks(source: self, head: head)
    }

    /// Resolves the box and runs its callbacks.
    func resolve(_ result: PromiseResult<Value, Error>) {
        CallbackDrain.run(settle(result))
    }

    /// Moves a delayed box to pending. Returns false if it was not delayed.
    func leaveDelayedState() -> Bool {
        lock.withLock { _ in
            guard status == .delayed else { return false }
            status = .pending
            return true
        }
    }

    // MARK: Callbacks

    /// Registers `node` and, if the box is already resolved, fires it synchronously and runs
    /// what that makes ready.
    func register(_ node: PromiseCallbackNode) {
        CallbackDrain.run(registerReturningReady(node))
    }

    /// Registers `node`; if the box is already resolved, fires it synchronously and returns the
    /// callbacks that made ready instead of running them (for callers inside a drain).
    func registerReturningReady(_ node: PromiseCallbackNode) -> ReadyCallbacks? {
        let isResolved: Bool = lock.withLock { _ in
            if status == .resolved { return true }
            if let tail = callbackTail {
                tail.next = node
            } else {
                callbackHead = node
            }
            callbackTail = node
            return false
        }
        guard isResolved else { return nil }
        return node.fire(source: self, isSynchronous: true)
    }

    /// Fires this box as a derived promise of `source` (see ``Handler``).
    override func fire(source: AnyObject, isSynchronous: Bool) -> ReadyCallbacks? {
        // The temporary reference the call takes is dropped before anything is submitted, so
        // that the job holds the only reference to the user's closure (released on its context).
        let outcome = handler.unsafelyUnwrapped(self, source, .arrive)
        switch outcome {
        case .settled(let ready):
            handler = nil
            return ready
        case .dispatch(let context):
            switch context.route(isSynchronous: isSynchronous) {
            case .inline(let flag):
                let work = handler.unsafelyUnwrapped
                handler = nil
                return runInline(isExecutingNow: flag) { work(self, source, .run).ready }
            case .executor(let executor):
                // The source box is resolved and immutable from here on.
                let source = UnsafeTransfer(source)
                executor.submit { [self] in
                    let work = self.handler.unsafelyUnwrapped
                    self.handler = nil
                    let ready = ExecutionFlags.with(isExecutingNow: false) { work(self, source.wrapped, .run).ready }
                    CallbackDrain.run(ready)
                }
                return nil
            }
        }
    }

    // MARK: Cancellation

    /// Moves a pending box to cancel-requested and runs the cancel handlers registered so far.
    func requestCancel() {
        let handlers: [CancelHandler<Value, Error>]? = lock.withLock { _ in
            guard status == .pending else { return nil }
            status = .cancelRequested
            let handlers = cancelHandlers
            cancelHandlers = []
            return handlers
        }
        guard let handlers else { return }
        for handler in handlers {
            handler.invoke(on: self, isSynchronous: false)
        }
    }

    /// Adds a handler for cancel requests. Runs it at once (synchronous trigger) if a cancel was
    /// already requested or the box was cancelled; drops it if the box has a value or an error.
    func addCancelHandler(_ handler: CancelHandler<Value, Error>) {
        let runNow: Bool = lock.withLock { _ in
            switch status {
            case .pending, .delayed:
                cancelHandlers.append(handler)
                return false
            case .cancelRequested:
                return true
            case .resolved:
                return storedResult?.isCancelled ?? false
            }
        }
        if runNow {
            handler.invoke(on: self, isSynchronous: true)
        }
    }

    /// Whether a context-dispatched cancel handler should still run: not once the box has a
    /// value or an error.
    var acceptsCancelHandlers: Bool {
        lock.withLock { _ in
            status != .resolved || (storedResult?.isCancelled ?? false)
        }
    }

    // MARK: Observer counting (automatic cancellation propagation)

    /// Counts one more propagating observer.
    func addObserver() {
        lock.withLock { _ in
            everObserved = true
            observerCount += 1
        }
    }

    /// One propagating observer requested cancellation; requests cancellation of this box when
    /// that was the last one and no handle is left.
    func removeObserver() {
        let cancel: Bool = lock.withLock { _ in
            observerCount -= 1
            return observerCount == 0 && sealed && everObserved
        }
        if cancel { requestCancel() }
    }

    /// The last handle is gone; requests cancellation when every observer already asked for it.
    func seal() {
        let cancel: Bool = lock.withLock { _ in
            sealed = true
            return observerCount == 0 && everObserved
        }
        if cancel { requestCancel() }
    }
}

/// The two calls of a derived promise's ``PromiseBox/Handler``.
enum HandlerStage {
    /// The upstream resolved; decide whether the callback must run (on the thread that fired).
    case arrive
    /// Run the callback (on its context).
    case run
}

/// What a ``PromiseBox/Handler`` did.
enum HandlerOutcome {
    /// The derived promise is settled (or will be by a pipe); run these callbacks.
    case settled(ReadyCallbacks?)
    /// Call again with `.run` on this context.
    case dispatch(PromiseContext)

    var ready: ReadyCallbacks? {
        if case .settled(let ready) = self { return ready }
        return nil
    }
}

/// Something that wants to hear about cancel requests on a promise.
enum CancelHandler<Value, Error>: @unchecked Sendable {
    /// Library bookkeeping (propagation to an upstream); runs inline, whatever the state.
    case inline(@Sendable () -> Void)
    /// A user's `onRequestCancel` handler on its context.
    case user(PromiseContext, @Sendable (Promise<Value, Error>.Resolver) -> Void)

    func invoke(on box: PromiseBox<Value, Error>, isSynchronous: Bool) {
        switch self {
        case .inline(let body):
            body()
        case .user(let context, let body):
            if case .immediate = context {
                // Called directly: it inherits the requesting thread's `isExecutingNow`.
                body(Promise<Value, Error>.Resolver(box: box))
                return
            }
            context.execute(isSynchronous: isSynchronous) {
                // A value or error that arrived meanwhile wins over the cancel request.
                if box.acceptsCancelHandlers { body(Promise<Value, Error>.Resolver(box: box)) }
            }
        }
    }
}
