import Tomorrowland

/// The error every generated program uses: an integer code, so that results compare and print.
struct ModelError: Error, Equatable {
    let code: Int
}

/// A promise outcome as both the library run and the reference model see it, free of the
/// library's types so that the model cannot depend on them.
enum ModelResult: Equatable, CustomStringConvertible {
    case value(Int)
    case error(Int)
    /// `PromiseTimeoutError.timedOut`, the error `timeout` rejects with.
    case timedOut
    case cancelled

    init(_ result: PromiseResult<Int, any Error>) {
        switch result {
        case .value(let value): self = .value(value)
        case .error(let error): self = ModelResult(error: error)
        case .cancelled: self = .cancelled
        }
    }

    init(error: any Error) {
        if let error = error as? ModelError {
            self = .error(error.code)
        } else if case .timedOut? = error as? PromiseTimeoutError<any Error> {
            self = .timedOut
        } else {
            // Any other error is a bug in the run; it shows in the trace as an odd code.
            self = .error(Int.min)
        }
    }

    var promiseResult: PromiseResult<Int, any Error> {
        switch self {
        case .value(let value): return .value(value)
        case .error(let code): return .error(ModelError(code: code))
        case .timedOut: return .error(PromiseTimeoutError<any Error>.timedOut)
        case .cancelled: return .cancelled
        }
    }

    var isValue: Bool {
        if case .value = self { return true }
        return false
    }

    var isError: Bool {
        switch self {
        case .error, .timedOut: return true
        case .value, .cancelled: return false
        }
    }

    /// The value, or 0 for anything else.
    var valueOrZero: Int {
        if case .value(let value) = self { return value }
        return 0
    }

    /// The error's code; `timedOut` counts as -1.
    var errorCode: Int {
        switch self {
        case .error(let code): return code
        case .timedOut: return -1
        case .value, .cancelled: return 0
        }
    }

    var description: String {
        switch self {
        case .value(let value): return "v\(value)"
        case .error(let code): return "e\(code)"
        case .timedOut: return "timedOut"
        case .cancelled: return "c"
        }
    }
}

/// What a user callback hands back to the library, computed by ``CallbackScript`` so that the
/// library run and the model agree on what the callbacks do and differ only in how promises
/// behave.
enum CallbackOutput: Equatable {
    /// The callback returns (or a `…Result` callback returns this result).
    case result(ModelResult)
    /// The callback throws `ModelError(code:)`.
    case thrown(Int)
    /// A `flatMap`-like callback returns a new pending promise, whose resolver the program keeps.
    case pendingPromise
    /// A `flatMap`-like callback returns an already resolved promise.
    case resolvedPromise(ModelResult)
}

/// The deterministic behaviour of callback number `k`, given what it was called with.
enum CallbackScript {
    /// `map`, `tryMap` (throws on some inputs).
    static func map(_ k: Int, _ value: Int, throwing: Bool) -> CallbackOutput {
        let out = value &+ k
        if throwing && out % 4 == 0 { return .thrown(1000 + k) }
        return .result(.value(out))
    }

    /// `tryThen`: throws on some inputs, otherwise the value passes.
    static func tryThen(_ k: Int, _ value: Int) -> CallbackOutput {
        (value &+ k) % 3 == 0 ? .thrown(2000 + k) : .result(.value(value))
    }

    /// The promise a `flatMap`-like callback returns: pending, fulfilled or rejected by `k`.
    static func promise(_ k: Int, seed: Int, throwing: Bool) -> CallbackOutput {
        if throwing && k % 4 == 3 { return .thrown(3000 + k) }
        switch k % 3 {
        case 0: return .pendingPromise
        case 1: return .resolvedPromise(.value(seed &+ k))
        default: return .resolvedPromise(.error(4000 + k))
        }
    }

    /// `tryRecover`: a value from the error, or a throw.
    static func recover(_ k: Int, _ error: ModelResult) -> CallbackOutput {
        k % 3 == 0 ? .thrown(5000 + k) : .result(.value(error.errorCode &+ k))
    }

    /// `mapError`, `tryMapError` (throws on some): the new error.
    static func mapError(_ k: Int, _ error: ModelResult, throwing: Bool) -> CallbackOutput {
        if throwing && k % 3 == 0 { return .thrown(6000 + k) }
        return .result(.error(error.errorCode &+ 7 &* k))
    }

    /// `mapResult`, `tryMapResult` (throws on some): any result.
    static func mapResult(_ k: Int, _ input: ModelResult, throwing: Bool) -> CallbackOutput {
        if throwing && k % 4 == 3 { return .thrown(7000 + k) }
        let seed: Int
        switch input {
        case .value(let value): seed = value
        case .error(let code): seed = code
        case .timedOut: seed = -1
        case .cancelled: seed = -2
        }
        switch k % 3 {
        case 0: return .result(.value(seed &+ k))
        case 1: return .result(.error(8000 + k))
        default: return .result(.cancelled)
        }
    }

    /// What callback number `callback` of `kind` hands back when called with `input`.
    static func output(of kind: CallbackKind, callback k: Int, input: ModelResult) -> CallbackOutput {
        switch kind {
        case .then, .catch, .always, .onCancel: return .result(input)
        case .tryThen: return tryThen(k, input.valueOrZero)
        case .map: return map(k, input.valueOrZero, throwing: false)
        case .tryMap: return map(k, input.valueOrZero, throwing: true)
        case .flatMap: return promise(k, seed: seed(of: input), throwing: false)
        case .tryFlatMap: return promise(k, seed: seed(of: input), throwing: true)
        case .tryRecover: return recover(k, input)
        case .mapError: return mapError(k, input, throwing: false)
        case .tryMapError: return mapError(k, input, throwing: true)
        case .flatMapError: return promise(k, seed: seed(of: input), throwing: false)
        case .tryFlatMapError: return promise(k, seed: seed(of: input), throwing: true)
        case .mapResult: return mapResult(k, input, throwing: false)
        case .tryMapResult: return mapResult(k, input, throwing: true)
        case .flatMapResult: return promise(k, seed: seed(of: input), throwing: false)
        case .tryFlatMapResult: return promise(k, seed: seed(of: input), throwing: true)
        }
    }

    /// The seed a `flatMap`-like callback builds its returned promise from.
    static func seed(of input: ModelResult) -> Int {
        switch input {
        case .value(let value): return value
        case .error(let code): return code
        case .timedOut: return -1
        case .cancelled: return -2
        }
    }
}

/// One observable thing that happened while a program ran; a run's trace is the list of these
/// in the order they happened.
enum ModelEvent: Equatable, CustomStringConvertible {
    /// Promise `promise` resolved with `result` (seen by a `tap(on: .immediate)` registered
    /// first, right after the promise was made).
    case resolved(promise: Int, ModelResult)
    /// User callback number `callback` ran with `input` (a value, an error or the result).
    case callback(Int, input: ModelResult)
    /// The `onRequestCancel` handler of the root promise `promise` ran.
    case requestCancelHandler(promise: Int)
    /// The `cancelRequested` callback of `propagatingCancellation` (callback number `callback`)
    /// ran.
    case cancelRequested(callback: Int)

    var description: String {
        switch self {
        case .resolved(let promise, let result): return "p\(promise) resolved \(result)"
        case .callback(let callback, let input): return "callback #\(callback) ran with \(input)"
        case .requestCancelHandler(let promise): return "onRequestCancel of p\(promise) ran"
        case .cancelRequested(let callback): return "cancelRequested #\(callback) ran"
        }
    }
}
