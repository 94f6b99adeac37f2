import Dispatch
import Synchronization

/// The shared state of one asynchronous `when(first:)`: the result's storage and the count of
/// inputs that have not been cancelled.
///
/// - Important: `@unchecked Sendable` only because `Value` and `Error` are unconstrained: the
///   state is immutable or atomic, and results travel with the promise they resolve.
@usableFromInline
final class WhenFirstCollector<Value, Error>: @unchecked Sendable {
    @usableFromInline
    let box = PromiseBox<Value, Error>()
    /// Inputs not cancelled yet, plus one while callbacks are being registered, so that a count
    /// reaching zero during registration is told apart from one reaching zero later.
    private let remaining: Atomic<Int>
    private let won = OnceFlag()
    private let cancelRemaining: Bool
    let inputs: WhenInputs

    @usableFromInline
    init(count: Int, cancelRemaining: Bool) {
        remaining = Atomic(count + 1)
        self.cancelRemaining = cancelRemaining
        inputs = WhenInputs(capacity: count)
    }

    /// Counts `input` as observed by the result. Call for every input before registering any
    /// callback, then ``startPropagatingCancel()``.
    @usableFromInline
    func observe(_ input: PromiseCore) {
        inputs.observe(input)
    }

    /// A cancel request on the result reaches every input as an observer's request.
    @usableFromInline
    func startPropagatingCancel() {
        let inputs = self.inputs
        box.addCancelHandler(.inline { inputs.removeObservers() })
    }

    /// Registration is over: if every input was cancelled meanwhile, cancels the result now.
    @usableFromInline
    func finishRegistration() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            box.resolve(.cancelled)
        }
    }

    /// An input was fulfilled or rejected: the result adopts it if it is the first.
    ///
    /// - Returns: The result's callbacks, for the drain that fired the input's callback.
    func adopt(_ result: PromiseResult<Value, Error>) -> ReadyCallbacks? {
        let ready = box.settle(result)
        if won.claim() && cancelRemaining { inputs.requestCancelAll() }
        return ready
    }

    /// An input was cancelled: when it was the last one, the result is cancelled, asynchronously
    /// on the `.utility` global queue (I6).
    func inputCancelled() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            let box = self.box
            PromiseContext.utility.executor.submit { box.resolve(.cancelled) }
        }
    }
}

/// The callback of one `when(first:)` input, run on the resolving thread. Never runs user code.
@usableFromInline
final class WhenFirstNode<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    private let collector: WhenFirstCollector<Value, Error>

    @usableFromInline
    init(collector: WhenFirstCollector<Value, Error>) {
        self.collector = collector
    }

    override func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        let result = PromiseBox<Value, Error>.resolvedResult(of: source)
        if result.isCancelled {
            collector.inputCancelled()
            return nil
        }
        return collector.adopt(result)
    }
}
