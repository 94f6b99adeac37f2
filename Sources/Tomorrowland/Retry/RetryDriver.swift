/// The state of one ``Promise/retry(on:attempts:backoff:shouldRetry:_:)``: which attempt runs,
/// the wait in progress, and whether a cancel was requested.
///
/// Ownership: the result's cancel handler, each attempt's callback and the wait's timer hold the
/// driver; the driver refers to the attempt in flight without keeping it alive (its callback
/// holds the driver), and the result's handler is released when the result resolves, which ends
/// every cycle.
///
/// - Important: `@unchecked Sendable`: `state` is guarded by `lock`; the rest is immutable.
final class RetryDriver<Value, Error>: @unchecked Sendable {
    private struct State {
        var attempt = 0
        var isCancelRequested = false
        /// The wait between attempts, while it lasts.
        var timer: PromiseTimer?
        /// The attempt in flight, counted as observed by the result; held without keeping it
        /// alive (the core's unowned kind, which costs the attempt no side table).
        var current: UpstreamReferenceBox?
        /// While ``runAttempt()`` starts an attempt: a failure seen meanwhile (an attempt
        /// already rejected) asks it to loop instead of starting the next attempt from inside
        /// the current one, so that retries without a wait do not nest on the stack.
        var isStartingAttempt = false
        var startsAgain = false
    }

    let box = PromiseBox<Value, Error>()
    private let lock = SpinLock()
    private var state = State()
    private let context: PromiseContext
    private let attempts: Int
    private let backoff: PromiseRetryBackoff
    private let shouldRetry: @Sendable (Error) -> Bool
    private let operation: @Sendable (Int) -> Promise<Value, Error>

    init(
        context: PromiseContext, attempts: Int, backoff: PromiseRetryBackoff,
        shouldRetry: @escaping @Sendable (Error) -> Bool,
        operation: @escaping @Sendable (Int) -> Promise<Value, Error>
    ) {
        self.context = context
        self.attempts = attempts
        self.backoff = backoff
        // B10: every attempt, and every retry decision, runs with the context current where the
        // retry was asked for.
        if CallbackContextPropagation.isOn {
            let captured = CallbackContextPropagation.captureCurrent()
            self.shouldRetry = { error in captured.withRestored { shouldRetry(error) } }
            self.operation = { attempt in captured.withRestored { operation(attempt) } }
        } else {
            self.shouldRetry = shouldRetry
            self.operation = operation
        }
    }

    /// Runs `body` on the state under the lock: the core's ``SpinLock``, whose atomics
    /// ThreadSanitizer sees (unlike `Mutex`'s futex path). The access to the state begins inside
    /// the lock.
    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.withLock { body(&state) }
    }

    func start() {
        box.addCancelHandler(.inline { [self] in cancel() })
        context.execute(isSynchronous: true) { [self] in runAttempt() }
    }

    /// Starts the next attempt (on the context), unless a cancel was requested; loops while
    /// attempts fail before their start is over and ask for another one at once.
    private func runAttempt() {
        while true {
            let number: Int? = withState { state in
                guard !state.isCancelRequested else { return nil }
                state.attempt += 1
                state.isStartingAttempt = true
                state.startsAgain = false
                return state.attempt
            }
            guard let number else {
                box.resolve(.cancelled)
                return
            }
            startAttempt(number)
            let again: Bool = withState { state in
                state.isStartingAttempt = false
                return state.startsAgain
            }
            if !again { return }
        }
    }

    /// Runs `operation` for attempt `number` and observes its promise.
    private func startAttempt(_ number: Int) {
        let inner = operation(number).box
        // The result observes the attempt as `flatMap` observes the promise it adopts.
        inner.addObserver()
        let isCancelRequested: Bool = withState { state in
            state.current = UpstreamReferenceBox(inner)
            return state.isCancelRequested
        }
        // A cancel requested while `operation` ran: pass it on now.
        if isCancelRequested { inner.removeObserver() }
        inner.register(
            ObserverNode(context: context) { [self] source in
                attemptFinished(number, PromiseBox<Value, Error>.resolvedResult(of: source))
            })
    }

    /// Attempt `number` resolved with `result`; runs on the context.
    private func attemptFinished(_ number: Int, _ result: PromiseResult<Value, Error>) {
        let isCancelRequested: Bool = withState { state in
            state.current = nil
            return state.isCancelRequested
        }
        switch result {
        case .value, .cancelled:
            box.resolve(result)
        case .error(let error):
            if isCancelRequested {
                box.resolve(.cancelled)
            } else if number >= attempts || !shouldRetry(error) {
                box.resolve(result)
            } else {
                wait(afterAttempt: number)
            }
        }
    }

    /// Waits the backoff after attempt `number`, then starts the next one.
    private func wait(afterAttempt number: Int) {
        let delay = backoff.delay(afterAttempt: number)
        guard delay > .zero else {
            // Already on the context. Inside a start (the attempt failed at once), the starting
            // loop goes on; otherwise start here.
            let deferred: Bool = withState { state in
                guard state.isStartingAttempt else { return false }
                state.startsAgain = true
                return true
            }
            if !deferred { runAttempt() }
            return
        }
        let timer = PromiseTimer(on: context)
        let isWaiting: Bool = withState { state in
            guard !state.isCancelRequested else { return false }
            state.timer = timer
            return true
        }
        guard isWaiting else {
            box.resolve(.cancelled)
            return
        }
        timer.arm(after: delay) { [self] firing in
            withState { $0.timer = nil }
            switch firing {
            case .due: runAttempt()
            // The executor shut down: no attempt can run on it any more.
            case .discarded: box.resolve(.cancelled)
            }
        }
    }

    /// A cancel request on the result: ends a wait at once, or passes the request to the attempt
    /// in flight.
    private func cancel() {
        let (timer, current): (PromiseTimer?, UpstreamReferenceBox?) = withState { state in
            state.isCancelRequested = true
            defer {
                state.timer = nil
                state.current = nil
            }
            return (state.timer, state.current)
        }
        if let timer {
            timer.cancel()
            box.resolve(.cancelled)
        }
        current?.reference.load()?.removeObserver()
    }
}
