import Dispatch

// The tuple forms of `when(fulfilled:)`: 2 to 6 inputs of different value types and one error
// type. They behave like the array form (synchronous cases, delivery on the QoS global queue,
// cancel propagation); values are kept type-erased in the slots and cast back in order.

/// One input of a tuple-form `when(fulfilled:)`, with its value type erased.
struct WhenTupleInput<Output, Error> {
    let box: PromiseCore
    /// The input's result if it has one, its value erased.
    let currentResult: () -> PromiseResult<Any, Error>?
    /// Registers the input's callback for slot `index`.
    let register: (WhenAllCollector<Any, Output, Error>, Int) -> Void

    init<V>(_ promise: Promise<V, Error>) {
        let box = promise.box
        self.box = box
        currentResult = {
            switch box.result {
            case .value(let value)?: return .value(value)
            case .error(let error)?: return .error(error)
            case .cancelled?: return .cancelled
            case nil: return nil
            }
        }
        register = { collector, index in
            box.register(WhenAllNode<V, Any, Output, Error>(collector: collector, index: index) { $0 as Any })
        }
    }
}

/// The machinery of the tuple forms; `makeOutput` builds the tuple from the values, in order.
func whenTuple<Output, Error>(
    _ inputs: [WhenTupleInput<Output, Error>],
    qos: DispatchQoS.QoSClass,
    cancelOnFailure: Bool,
    makeOutput: @escaping ([Any]) -> Output
) -> Promise<Output, Error> {
    var values: [Any] = []
    var allFulfilled = true
    for input in inputs {
        switch input.currentResult() {
        case .value(let value)?:
            values.append(value)
        case .error(let error)?:
            if cancelOnFailure { inputs.forEach { $0.box.requestCancel() } }
            return Promise(rejected: error)
        case .cancelled?:
            if cancelOnFailure { inputs.forEach { $0.box.requestCancel() } }
            return Promise(with: .cancelled)
        case nil:
            allFulfilled = false
        }
    }
    if allFulfilled { return Promise(fulfilled: makeOutput(values)) }

    let collector = WhenAllCollector<Any, Output, Error>(
        count: inputs.count,
        executor: PromiseContext(qos: qos).executor,
        cancelOnFailure: cancelOnFailure
    ) { slots in
        // `unsafelyUnwrapped`: called once every input was fulfilled, so every slot is filled.
        makeOutput((0..<slots.count).map { slots[$0].take().unsafelyUnwrapped })
    }
    for input in inputs {
        collector.observe(input.box)
    }
    collector.startPropagatingCancel()
    for (index, input) in inputs.enumerated() {
        input.register(collector, index)
    }
    return Promise(box: collector.box)
}

/// A promise fulfilled with the values of 2 promises, as a tuple, once all are fulfilled.
///
/// The inputs may have different value types but share one error type. Same rules as the array
/// form ``when(fulfilled:qos:cancelOnFailure:)``: synchronous results for inputs resolved
/// already, the first failure wins, the outcome is otherwise delivered on
/// `DispatchQueue.global(qos: qos)`, and cancel requests on the result reach every input.
///
/// - Parameters:
///   - a: The first input.
///   - b: The second input.
///   - qos: The quality-of-service class of the global queue that delivers the outcome.
///   - cancelOnFailure: If true, the first rejection or cancellation of an input requests
///     cancellation of every input, once.
/// - Returns: The combined promise.
public func when<Value1, Value2, Error>(
    fulfilled a: Promise<Value1, Error>, _ b: Promise<Value2, Error>, qos: DispatchQoS.QoSClass = .default,
    cancelOnFailure: Bool = false
) -> Promise<(Value1, Value2), Error> {
    whenTuple([WhenTupleInput(a), WhenTupleInput(b)], qos: qos, cancelOnFailure: cancelOnFailure) { values in
        // The slots hold each input's value at its own index: the casts cannot fail.
        (values[0] as! Value1, values[1] as! Value2)
    }
}

/// A promise fulfilled with the values of 3 promises, as a tuple, once all are fulfilled.
///
/// The inputs may have different value types but share one error type. Same rules as the array
/// form ``when(fulfilled:qos:cancelOnFailure:)``: synchronous results for inputs resolved
/// already, the first failure wins, the outcome is otherwise delivered on
/// `DispatchQueue.global(qos: qos)`, and cancel requests on the result reach every input.
///
/// - Parameters:
///   - a: The first input.
///   - b: The second input.
///   - c: The third input.
///   - qos: The quality-of-service class of the global queue that delivers the outcome.
///   - cancelOnFailure: If true, the first rejection or cancellation of an input requests
///     cancellation of every input, once.
/// - Returns: The combined promise.
public func when<Value1, Value2, Value3, Error>(
    fulfilled a: Promise<Value1, Error>, _ b: Promise<Value2, Error>, _ c: Promise<Value3, Error>,
    qos: DispatchQoS.QoSClass = .default, cancelOnFailure: Bool = false
) -> Promise<(Value1, Value2, Value3), Error> {
    whenTuple([WhenTupleInput(a), WhenTupleInput(b), WhenTupleInput(c)], qos: qos, cancelOnFailure: cancelOnFailure) {
        values in
        // The slots hold each input's value at its own index: the casts cannot fail.
        (values[0] as! Value1, values[1] as! Value2, values[2] as! Value3)
    }
}

/// A promise fulfilled with the values of 4 promises, as a tuple, once all are fulfilled.
///
/// The inputs may have different value types but share one error type. Same rules as the array
/// form ``when(fulfilled:qos:cancelOnFailure:)``: synchronous results for inputs resolved
/// already, the first failure wins, the outcome is otherwise delivered on
/// `DispatchQueue.global(qos: qos)`, and cancel requests on the result reach every input.
///
/// - Parameters:
///   - a: The first input.
///   - b: The second input.
///   - c: The third input.
///   - d: The fourth input.
///   - qos: The quality-of-service class of the global queue that delivers the outcome.
///   - cancelOnFailure: If true, the first rejection or cancellation of an input requests
///     cancellation of every input, once.
/// - Returns: The combined promise.
public func when<Value1, Value2, Value3, Value4, Error>(
    fulfilled a: Promise<Value1, Error>, _ b: Promise<Value2, Error>, _ c: Promise<Value3, Error>,
    _ d: Promise<Value4, Error>, qos: DispatchQoS.QoSClass = .default, cancelOnFailure: Bool = false
) -> Promise<(Value1, Value2, Value3, Value4), Error> {
    whenTuple(
        [WhenTupleInput(a), WhenTupleInput(b), WhenTupleInput(c), WhenTupleInput(d)], qos: qos,
        cancelOnFailure: cancelOnFailure
    ) { values in
        // The slots hold each input's value at its own index: the casts cannot fail.
        (values[0] as! Value1, values[1] as! Value2, values[2] as! Value3, values[3] as! Value4)
    }
}

/// A promise fulfilled with the values of 5 promises, as a tuple, once all are fulfilled.
///
/// The inputs may have different value types but share one error type. Same rules as the array
/// form ``when(fulfilled:qos:cancelOnFailure:)``: synchronous results for inputs resolved
/// already, the first failure wins, the outcome is otherwise delivered on
/// `DispatchQueue.global(qos: qos)`, and cancel requests on the result reach every input.
///
/// - Parameters:
///   - a: The first input.
///   - b: The second input.
///   - c: The third input.
///   - d: The fourth input.
///   - e: The fifth input.
///   - qos: The quality-of-service class of the global queue that delivers the outcome.
///   - cancelOnFailure: If true, the first rejection or cancellation of an input requests
///     cancellation of every input, once.
/// - Returns: The combined promise.
public func when<Value1, Value2, Value3, Value4, Value5, Error>(
    fulfilled a: Promise<Value1, Error>, _ b: Promise<Value2, Error>, _ c: Promise<Value3, Error>,
    _ d: Promise<Value4, Error>, _ e: Promise<Value5, Error>, qos: DispatchQoS.QoSClass = .default,
    cancelOnFailure: Bool = false
) -> Promise<(Value1, Value2, Value3, Value4, Value5), Error> {
    whenTuple(
        [WhenTupleInput(a), WhenTupleInput(b), WhenTupleInput(c), WhenTupleInput(d), WhenTupleInput(e)], qos: qos,
        cancelOnFailure: cancelOnFailure
    ) { values in
        // The slots hold each input's value at its own index: the casts cannot fail.
        (values[0] as! Value1, values[1] as! Value2, values[2] as! Value3, values[3] as! Value4, values[4] as! Value5)
    }
}

/// A promise fulfilled with the values of 6 promises, as a tuple, once all are fulfilled.
///
/// The inputs may have different value types but share one error type. Same rules as the array
/// form ``when(fulfilled:qos:cancelOnFailure:)``: synchronous results for inputs resolved
/// already, the first failure wins, the outcome is otherwise delivered on
/// `DispatchQueue.global(qos: qos)`, and cancel requests on the result reach every input.
///
/// - Parameters:
///   - a: The first input.
///   - b: The second input.
///   - c: The third input.
///   - d: The fourth input.
///   - e: The fifth input.
///   - f: The sixth input.
///   - qos: The quality-of-service class of the global queue that delivers the outcome.
///   - cancelOnFailure: If true, the first rejection or cancellation of an input requests
///     cancellation of every input, once.
/// - Returns: The combined promise.
public func when<Value1, Value2, Value3, Value4, Value5, Value6, Error>(
    fulfilled a: Promise<Value1, Error>, _ b: Promise<Value2, Error>, _ c: Promise<Value3, Error>,
    _ d: Promise<Value4, Error>, _ e: Promise<Value5, Error>, _ f: Promise<Value6, Error>,
    qos: DispatchQoS.QoSClass = .default, cancelOnFailure: Bool = false
) -> Promise<(Value1, Value2, Value3, Value4, Value5, Value6), Error> {
    whenTuple(
        [
            WhenTupleInput(a), WhenTupleInput(b), WhenTupleInput(c), WhenTupleInput(d), WhenTupleInput(e),
            WhenTupleInput(f),
        ], qos: qos, cancelOnFailure: cancelOnFailure
    ) { values in
        // The slots hold each input's value at its own index: the casts cannot fail.
        (
            values[0] as! Value1, values[1] as! Value2, values[2] as! Value3, values[3] as! Value4,
            values[4] as! Value5, values[5] as! Value6
        )
    }
}
