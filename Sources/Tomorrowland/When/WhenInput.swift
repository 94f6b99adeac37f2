/// An input of `when`, as the combinators see it once its type is erased: something to observe
/// (propagating observer counting) and to cancel, held weakly.
protocol WhenObservedInput: PromiseCancelRequestable {
    func addObserver()
    func removeObserver()
}

extension PromiseCore: WhenObservedInput {}

/// A weak reference to a `when` input: the combinators never keep their inputs alive.
struct WeakWhenInput {
    weak var input: (any WhenObservedInput)?
}

/// The inputs of one `when` call, weakly held, for cancel requests and observer counting.
///
/// Written completely before any input's callback is registered, read-only afterwards, so the
/// callbacks, which may run on any thread, read it without a lock (they are ordered after the
/// writes by the input's own lock, taken to register them).
struct WhenInputs: @unchecked Sendable {
    private var inputs: ContiguousArray<WeakWhenInput> = []

    init(capacity: Int) {
        inputs.reserveCapacity(capacity)
    }

    /// Adds `input` and counts it as observed (a propagating observer per occurrence).
    mutating func observe(_ input: any WhenObservedInput) {
        input.addObserver()
        inputs.append(WeakWhenInput(input: input))
    }

    /// Each observer asks for cancellation: inputs with no other observer and no handle left
    /// are cancelled (automatic propagation).
    func removeObservers() {
        for entry in inputs {
            entry.input?.removeObserver()
        }
    }

    /// Requests cancellation of every input that still exists.
    func requestCancelAll() {
        for entry in inputs {
            entry.input?.requestCancel()
        }
    }
}
