import Dispatch

/// A promise fulfilled with the values of all `promises`, in order, once every one is fulfilled.
///
/// The first input to be rejected or cancelled (in resolution order) rejects or cancels the
/// result; later failures are ignored. The same promise may appear more than once.
///
/// If, when this is called, every input is fulfilled, the result is fulfilled before return; if
/// some input is rejected or cancelled, the result is too, before return (the first in argument
/// order). Otherwise the fulfilment, or a later failure, is delivered asynchronously on
/// `DispatchQueue.global(qos: qos)`.
///
/// Each input counts the result as a propagating observer: a cancel request on the result asks
/// every input (inputs are not kept alive by the result). An empty array gives `[]` at once.
/// Time and memory are linear in the number of inputs.
///
/// - Parameters:
///   - promises: The inputs.
///   - qos: The quality-of-service class of the global queue that delivers the outcome.
///   - cancelOnFailure: If true, the first rejection or cancellation of an input requests
///     cancellation of every input, once.
/// - Returns: The combined promise.
@inlinable
public func when<Value, Error>(
    fulfilled promises: [Promise<Value, Error>], qos: DispatchQoS.QoSClass = .default, cancelOnFailure: Bool = false
) -> Promise<[Value], Error> {
    if promises.isEmpty { return Promise(fulfilled: []) }
    // Inputs resolved already decide synchronously (I3): a failure (the first in argument
    // order), or all fulfilled.
    var values: [Value] = []
    var allFulfilled = true
    for promise in promises {
        switch promise.result {
        case .value(let value)?:
            if allFulfilled {
                if values.isEmpty { values.reserveCapacity(promises.count) }
                values.append(value)
            }
        case .error(let error)?:
            if cancelOnFailure { requestCancel(promises) }
            return Promise(rejected: error)
        case .cancelled?:
            if cancelOnFailure { requestCancel(promises) }
            return Promise(with: .cancelled)
        case nil:
            allFulfilled = false
            values = []
        }
    }
    if allFulfilled { return Promise(fulfilled: values) }

    let collector = WhenAllCollector<Value, [Value], Error>(
        count: promises.count,
        executor: PromiseContext(qos: qos).executor,
        cancelOnFailure: cancelOnFailure
    ) { slots in
        // `unsafelyUnwrapped`: called once every input was fulfilled, so every slot is filled.
        (0..<slots.count).map { slots[$0].take().unsafelyUnwrapped }
    }
    for promise in promises {
        collector.observe(promise.box)
    }
    collector.startPropagatingCancel()
    for (index, promise) in promises.enumerated() {
        promise.box.register(WhenAllNode<Value, Value, [Value], Error>(collector: collector, index: index) { $0 })
    }
    return Promise(box: collector.box)
}

/// A promise that adopts the first fulfilment or rejection among `promises`.
///
/// Cancelled inputs are ignored, unless every input is cancelled: then the result is cancelled
/// (before return if they all are already, otherwise asynchronously on
/// `DispatchQueue.global(qos: .utility)`). Inputs resolved already are looked at in argument
/// order, so the earliest in the array wins; other outcomes are delivered on the thread that
/// resolves the input, with no hop. An empty array gives a cancelled promise. Duplicates are fine.
///
/// Each input counts the result as a propagating observer: a cancel request on the result asks
/// every input (inputs are not kept alive by the result).
///
/// - Parameters:
///   - promises: The inputs.
///   - cancelRemaining: If true, the first fulfilment or rejection requests cancellation of
///     every input.
/// - Returns: The promise of the first outcome.
@inlinable
public func when<Value, Error>(
    first promises: [Promise<Value, Error>], cancelRemaining: Bool = false
) -> Promise<Value, Error> {
    if promises.isEmpty { return Promise(with: .cancelled) }
    var allCancelled = true
    for promise in promises {
        guard let result = promise.result else {
            allCancelled = false
            continue
        }
        if result.isCancelled { continue }
        if cancelRemaining { requestCancel(promises) }
        return Promise(with: result)
    }
    if allCancelled { return Promise(with: .cancelled) }

    let collector = WhenFirstCollector<Value, Error>(count: promises.count, cancelRemaining: cancelRemaining)
    for promise in promises {
        collector.observe(promise.box)
    }
    collector.startPropagatingCancel()
    for promise in promises {
        promise.box.register(WhenFirstNode(collector: collector))
    }
    collector.finishRegistration()
    return Promise(box: collector.box)
}

/// Requests cancellation of each promise (`cancelOnFailure`, `cancelRemaining` decided before
/// any callback was registered).
@usableFromInline
func requestCancel<Value, Error>(_ promises: [Promise<Value, Error>]) {
    for promise in promises {
        promise.requestCancel()
    }
}
