import Synchronization

/// The shared state of one asynchronous `when(fulfilled:)`: a slot per input, the count still
/// missing, the first failure, and the result's storage.
///
/// Values are stored inline on the resolving thread (no hop per input); only the outcome hops:
/// the fulfilment, and the first failure, are delivered on the global queue of the caller's QoS,
/// as Tomorrowland does. Memory and time are linear in the number of inputs: one slot and one
/// callback node per input.
///
/// - Important: `@unchecked Sendable`: each slot is written once, by the callback of its input,
///   and read only after `remaining` reached zero (acquire-release on the counter orders every
///   write before the read), `makeOutput` runs once, and the rest is immutable or atomic.
@usableFromInline
final class WhenAllCollector<Element, Output, Error>: @unchecked Sendable {
    @usableFromInline
    let box = PromiseBox<Output, Error>()
    private let slots: UnsafeMutablePointer<Element?>
    private let count: Int
    private let remaining: Atomic<Int>
    private let failed = OnceFlag()
    private let executor: any PromiseExecutor
    private let cancelOnFailure: Bool
    private let makeOutput: (UnsafeMutableBufferPointer<Element?>) -> Output
    /// Filled by ``observe(_:)`` before the first callback is registered.
    let inputs: WhenInputs

    /// - Parameters:
    ///   - executor: Where the outcome is delivered.
    ///   - makeOutput: Builds the value from the filled slots (it may move them out).
    @usableFromInline
    init(
        count: Int, executor: any PromiseExecutor, cancelOnFailure: Bool,
        makeOutput: @escaping (UnsafeMutableBufferPointer<Element?>) -> Output
    ) {
        precondition(count > 0)
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil, count: count)
        remaining = Atomic(count)
        self.executor = executor
        self.cancelOnFailure = cancelOnFailure
        self.makeOutput = makeOutput
        inputs = WhenInputs(capacity: count)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Counts `input` as observed by the result. Call for every input, in order, before
    /// registering any callback, then ``startPropagatingCancel()``.
    @usableFromInline
    func observe(_ input: PromiseCore) {
        inputs.observe(input)
    }

    /// A cancel request on the result reaches every input as an observer's request (I5).
    @usableFromInline
    func startPropagatingCancel() {
        let inputs = self.inputs
        // The handler is released when the result resolves, which breaks the cycle through the
        // collector.
        box.addCancelHandler(.inline { inputs.removeObservers() })
    }

    /// Input `index` was fulfilled.
    func store(_ element: Element, at index: Int) {
        slots[index] = element
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            // Only reached when every input was fulfilled, so no failure can compete.
            executor.submit { [self] in
                let output = makeOutput(UnsafeMutableBufferPointer(start: slots, count: count))
                box.resolve(.value(output))
            }
        }
    }

    /// An input was rejected or cancelled; the first one in resolution order wins.
    func fail(_ result: PromiseResult<Output, Error>) {
        guard failed.claim() else { return }
        // The failure travels to the delivery queue with the promise it resolves.
        let delivered = UnsafeTransfer(result)
        executor.submit { [self] in
            box.resolve(delivered.wrapped)
            if cancelOnFailure { inputs.requestCancelAll() }
        }
    }
}

/// The callback of one `when(fulfilled:)` input: stores its value, or reports its failure, on
/// the resolving thread. Never runs user code.
@usableFromInline
final class WhenAllNode<InputValue, Element, Output, Error>: PromiseCallbackNode, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    private let collector: WhenAllCollector<Element, Output, Error>
    private let index: Int
    private let convert: (InputValue) -> Element

    @usableFromInline
    init(collector: WhenAllCollector<Element, Output, Error>, index: Int, convert: @escaping (InputValue) -> Element) {
        self.collector = collector
        self.index = index
        self.convert = convert
    }

    override func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        switch PromiseBox<InputValue, Error>.resolvedResult(of: source) {
        case .value(let value): collector.store(convert(value), at: index)
        case .error(let error): collector.fail(.error(error))
        case .cancelled: collector.fail(.cancelled)
        }
        return nil
    }
}
