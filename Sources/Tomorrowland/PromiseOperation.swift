import Foundation

/// An `Operation` that runs a promise handler when the operation starts.
///
/// Create it like a ``Promise``, with a context and a handler. The handler does not run until the
/// operation starts (``start()`` by hand, or an `OperationQueue`); ``promise`` is available at
/// once and stays pending until then. The operation is asynchronous: it is executing from
/// ``start()`` until ``promise`` resolves, and finished before any other observer of ``promise``
/// runs. So on a queue, dependants and later operations wait for the promise, not just for the
/// handler to return.
///
/// Cancelling the operation requests cancellation of ``promise``, and a cancel request on
/// ``promise`` cancels the operation. Before the start, a cancel keeps the handler from ever
/// running, but ``promise`` is only cancelled when the operation starts (a queue starts a
/// cancelled operation right away). After the start, the handler decides, as with any promise
/// (through `onRequestCancel`).
public final class PromiseOperation<Value, Error>: Operation, @unchecked Sendable {
    // `@unchecked Sendable` as `Operation` is: `state` and `handler` are guarded by `lock` (after
    // init), everything else is immutable.

    /// The resolver the handler receives.
    public typealias Resolver = Promise<Value, Error>.Resolver

    private enum State {
        case initial, executing, finished
    }

    /// The handler's own storage, delayed until the start.
    private let handlerBox = PromiseBox<Value, Error>(delayed: ())
    private let context: PromiseContext
    private let lock = SpinLock()
    private var handler: (@Sendable (Resolver) -> Void)?
    private var state = State.initial
    /// The public promise, piped from `handlerBox`.
    private let publicPromise: Promise<Value, Error>

    /// An operation that runs `handler` on `context` when it starts.
    ///
    /// - Parameters:
    ///   - context: Where `handler` runs. The start is an asynchronous trigger: `.immediate` runs
    ///     `handler` on the thread that calls ``start()`` (the queue's worker on a queue),
    ///     `.nowOr(x)` runs it on `x`, every other context runs it asynchronously.
    ///   - handler: Receives the resolver; released after it runs.
    @preconcurrency
    public init(on context: PromiseContext, _ handler: @escaping @Sendable (_ resolver: Resolver) -> Void) {
        self.context = context
        // B10: the handler runs with the context current where the operation was made.
        if CallbackContextPropagation.isOn {
            self.handler = CallbackContextPropagation.captureCurrent().wrapping(handler)
        } else {
            self.handler = handler
        }
        let child = PromiseBox<Value, Error>()
        publicPromise = Promise(box: child)
        super.init()
        // Registered first, so that the operation is finished before any other observer of the
        // promise runs (H4). Weak: the promise must not keep the operation alive.
        child.register(
            ObserverNode(context: .immediate) { [weak self] _ in
                self?.finish()
            })
        // A cancel request on the promise is `cancel()` on the operation (H5).
        child.addCancelHandler(
            .inline { [weak self] in
                guard let self, !self.isCancelled else { return }
                self.cancel()
            })
        handlerBox.register(child.pipeNode())
    }

    deinit {
        // Never started: the promise is cancelled now (H8). Started: nothing to do.
        if handlerBox.leaveDelayedState() {
            handlerBox.resolve(.cancelled)
        }
    }

    /// Runs `body` on the state under the lock: the core's ``SpinLock``, whose atomics
    /// ThreadSanitizer sees (unlike `Mutex`'s futex path). The access to the state begins inside
    /// the lock.
    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.withLock { body(&state) }
    }

    /// The promise the handler resolves. The same promise on every access.
    public var promise: Promise<Value, Error> {
        publicPromise
    }

    /// Always true: the operation is executing until ``promise`` resolves.
    public override var isAsynchronous: Bool {
        true
    }

    /// True from ``start()`` until ``promise`` resolves.
    public override var isExecuting: Bool {
        withState { $0 == .executing }
    }

    /// True once ``promise`` has resolved.
    public override var isFinished: Bool {
        withState { $0 == .finished }
    }

    /// Starts the handler on its context, or, if cancellation was requested before, cancels
    /// ``promise`` without running the handler. Does nothing after the first call.
    ///
    /// The handler runs as from an asynchronous trigger: inline on the calling thread for
    /// `.immediate`, on `x` for `.nowOr(x)`.
    public override func start() {
        let isFirst: Bool = withState { state in
            guard state == .initial else { return false }
            state = .executing
            return true
        }
        guard isFirst else { return }
        // The state changed above, under the lock; observers are told outside it.
        willChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isExecuting")
        let child = publicPromise.box
        guard handlerBox.leaveDelayedState() else { return }
        // `isCancelled` too: on Linux, `Operation.cancel()` marks a waiting operation ready inside
        // `super.cancel()`, and its queue may start it (on another thread) before our `cancel()`
        // has passed the request on to the promise.
        if isCancelled || child.hasRequestedCancel {
            // Cancelled before the start: the handler never runs (H6).
            // Taken out and released after unlocking: its captures are the user's.
            let dropped = lock.withLock { self.handler.take() }
            withExtendedLifetime(dropped) {}
            handlerBox.resolve(.cancelled)
            return
        }
        // Cancel requests on the promise reach the handler's storage only from now on (H7). The
        // handler's storage has no handle of its own: sealing it lets the promise's requests
        // cancel it automatically.
        child.propagateCancel(to: handlerBox)
        handlerBox.seal()
        guard let handler = lock.withLock({ self.handler.take() }) else { return }
        let box = handlerBox
        context.execute(isSynchronous: false) { handler(Resolver(box: box)) }
    }

    /// Marks the operation cancelled, then requests cancellation of ``promise``.
    public override func cancel() {
        super.cancel()
        publicPromise.requestCancel()
    }

    /// Unavailable: a `PromiseOperation` runs its handler from ``start()``.
    @available(*, unavailable, message: "PromiseOperation runs its handler from start()")
    public override func main() {}

    /// Moves to finished when the promise resolves (from its first observer).
    private func finish() {
        let wasExecuting: Bool = withState { state in
            let wasExecuting = state == .executing
            state = .finished
            return wasExecuting
        }
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
        didChangeValue(forKey: "isFinished")
    }
}

/// An operation whose promise's error is any `Swift.Error`.
public typealias StdPromiseOperation<Value> = PromiseOperation<Value, Swift.Error>
