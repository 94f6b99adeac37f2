import TomorrowlandSimulation

/// Where a generated callback runs.
enum ModelContext: Int, CaseIterable, CustomStringConvertible {
    /// `.loop(testLoop)`: always a job on the test loop.
    case loop
    /// `.immediate`: inline, on whatever triggers it.
    case immediate
    /// `.nowOr(.loop(testLoop))`: inline on a synchronous trigger, a job otherwise.
    case nowOrLoop

    var description: String {
        switch self {
        case .loop: return "loop"
        case .immediate: return "immediate"
        case .nowOrLoop: return "nowOr(loop)"
        }
    }
}

/// The callback families a program registers; each makes a new promise from its receiver.
enum CallbackKind: Int, CaseIterable {
    case then, map, flatMap, `catch`, tryRecover, mapError, flatMapError, always, mapResult
    case flatMapResult, tryThen, tryMap, tryFlatMap, tryMapError, tryFlatMapError, tryMapResult
    case tryFlatMapResult, onCancel

    /// Observer-family callbacks let their promise adopt the receiver's result when their token
    /// suppresses them (E2); transform-family ones cancel it.
    var isObserver: Bool {
        switch self {
        case .then, .catch, .always, .onCancel, .tryThen: return true
        default: return false
        }
    }

    /// Whether the callback is applicable to a result; an inapplicable one passes the result
    /// through (the callback outcome table of Tomorrowland.docc/BehaviourRules.md).
    func applies(to result: ModelResult) -> Bool {
        switch self {
        case .then, .map, .flatMap, .tryThen, .tryMap, .tryFlatMap: return result.isValue
        case .catch, .tryRecover, .mapError, .flatMapError, .tryMapError, .tryFlatMapError: return result.isError
        case .always, .mapResult, .flatMapResult, .tryMapResult, .tryFlatMapResult: return true
        case .onCancel: return result == .cancelled
        }
    }

    /// Whether the callback returns a promise the child adopts.
    var returnsPromise: Bool {
        switch self {
        case .flatMap, .flatMapError, .flatMapResult, .tryFlatMap, .tryFlatMapError, .tryFlatMapResult: return true
        default: return false
        }
    }
}

/// One step of a generated program.
///
/// Operands are raw numbers, interpreted when the step runs (promise `n` is the
/// `n % count`-th promise that exists then, and likewise for roots and tokens), so that every
/// program is valid, including the ones the shrinker makes by deleting steps.
enum ModelOp: CustomStringConvertible {
    /// `Promise.makeWithResolver()` plus a `resolver.onRequestCancel(on:)` that records.
    case makeRoot(requestContext: ModelContext)
    case fulfill(root: Int, value: Int)
    case reject(root: Int, code: Int)
    case cancel(root: Int)
    /// `resolver.resolve(with: promise)` on a pending root.
    case resolveWithPromise(root: Int, source: Int)
    /// `promise.cancellable.requestCancel()`.
    case requestCancel(promise: Int)
    /// Drops the program's handle (the last one), which seals the promise.
    case dropHandle(promise: Int)
    case derive(CallbackKind, parent: Int, context: ModelContext, token: Int?)
    /// `tap(on:token:_:)`: a callback, no new promise.
    case tapCallback(parent: Int, context: ModelContext, token: Int?)
    /// `tap()`.
    case tapPromise(parent: Int)
    case makeChild(parent: Int)
    case ignoringCancel(parent: Int)
    case propagatingCancellation(parent: Int, context: ModelContext)
    case makeToken
    case invalidate(token: Int)
    case cancelWithoutInvalidating(token: Int)
    case requestCancelOnInvalidate(promise: Int, token: Int)
    /// `timeout(on: .loop(testLoop), delay:)` in milliseconds.
    case timeout(parent: Int, milliseconds: Int)
    /// `delay(on: .loop(testLoop), _:)` in milliseconds.
    case delay(parent: Int, milliseconds: Int)
    /// `testLoop.advance(by:)` in milliseconds.
    case advance(milliseconds: Int)

    /// Whether the step works on a promise, so is skipped while none exists (a shrunk program
    /// may have lost the steps that made them).
    var needsPromise: Bool {
        switch self {
        case .makeRoot, .makeToken, .invalidate, .cancelWithoutInvalidating, .advance: return false
        default: return true
        }
    }

    var description: String {
        func tokenText(_ token: Int?) -> String { token.map { ", token: t\($0)" } ?? "" }
        switch self {
        case .makeRoot(let context): return "makeRoot(onRequestCancel: \(context))"
        case .fulfill(let root, let value): return "fulfill(root r\(root), \(value))"
        case .reject(let root, let code): return "reject(root r\(root), e\(code))"
        case .cancel(let root): return "cancel(root r\(root))"
        case .resolveWithPromise(let root, let source): return "resolve(root r\(root), with: p\(source))"
        case .requestCancel(let promise): return "requestCancel(p\(promise))"
        case .dropHandle(let promise): return "dropHandle(p\(promise))"
        case .derive(let kind, let parent, let context, let token):
            return "p\(parent).\(kind)(on: \(context)\(tokenText(token)))"
        case .tapCallback(let parent, let context, let token):
            return "p\(parent).tap(on: \(context)\(tokenText(token)))"
        case .tapPromise(let parent): return "p\(parent).tap()"
        case .makeChild(let parent): return "p\(parent).makeChild()"
        case .ignoringCancel(let parent): return "p\(parent).ignoringCancel()"
        case .propagatingCancellation(let parent, let context):
            return "p\(parent).propagatingCancellation(on: \(context))"
        case .makeToken: return "makeToken()"
        case .invalidate(let token): return "t\(token).invalidate()"
        case .cancelWithoutInvalidating(let token): return "t\(token).cancelWithoutInvalidating()"
        case .requestCancelOnInvalidate(let promise, let token):
            return "t\(token).requestCancelOnInvalidate(p\(promise))"
        case .timeout(let parent, let milliseconds): return "p\(parent).timeout(on: loop, \(milliseconds) ms)"
        case .delay(let parent, let milliseconds): return "p\(parent).delay(on: loop, \(milliseconds) ms)"
        case .advance(let milliseconds): return "advance(by: \(milliseconds) ms)"
        }
    }
}

enum ModelProgramGenerator {
    /// A random program of `length` steps. It starts with two roots so that most steps have
    /// something to work on; references are raw numbers (see ``ModelOp``).
    static func program(seed: UInt64, length: Int) -> [ModelOp] {
        var random = SimulationRandom(seed: seed)
        var ops: [ModelOp] = [.makeRoot(requestContext: .loop), .makeRoot(requestContext: .immediate)]
        func any(_ random: inout SimulationRandom) -> Int { Int.random(in: 0..<64, using: &random) }
        func context(_ random: inout SimulationRandom) -> ModelContext {
            ModelContext.allCases.randomElement(using: &random)!
        }
        func token(_ random: inout SimulationRandom) -> Int? {
            Int.random(in: 0..<3, using: &random) == 0 ? any(&random) : nil
        }
        while ops.count < length {
            let op: ModelOp
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<6: op = .makeRoot(requestContext: context(&random))
            case 6..<13: op = .fulfill(root: any(&random), value: Int.random(in: 0..<100, using: &random))
            case 13..<17: op = .reject(root: any(&random), code: Int.random(in: 0..<100, using: &random))
            case 17..<20: op = .cancel(root: any(&random))
            case 20..<22: op = .resolveWithPromise(root: any(&random), source: any(&random))
            case 22..<29: op = .requestCancel(promise: any(&random))
            case 29..<36: op = .dropHandle(promise: any(&random))
            case 36..<66:
                op = .derive(
                    CallbackKind.allCases.randomElement(using: &random)!, parent: any(&random),
                    context: context(&random), token: token(&random))
            case 66..<69: op = .tapCallback(parent: any(&random), context: context(&random), token: token(&random))
            case 69..<71: op = .tapPromise(parent: any(&random))
            case 71..<74: op = .makeChild(parent: any(&random))
            case 74..<76: op = .ignoringCancel(parent: any(&random))
            case 76..<78: op = .propagatingCancellation(parent: any(&random), context: context(&random))
            case 78..<80: op = .makeToken
            case 80..<83: op = .invalidate(token: any(&random))
            case 83..<84: op = .cancelWithoutInvalidating(token: any(&random))
            case 84..<86: op = .requestCancelOnInvalidate(promise: any(&random), token: any(&random))
            case 86..<89: op = .timeout(parent: any(&random), milliseconds: Int.random(in: 1...40, using: &random))
            case 89..<92: op = .delay(parent: any(&random), milliseconds: Int.random(in: 1...40, using: &random))
            default: op = .advance(milliseconds: Int.random(in: 1...25, using: &random))
            }
            ops.append(op)
        }
        return ops
    }
}

/// Deletes steps while a program still fails: first halves, then ever smaller chunks, down to
/// single steps, until no single deletion keeps it failing.
enum ModelProgramShrinker {
    static func shrink(_ program: [ModelOp], stillFails: ([ModelOp]) -> Bool) -> [ModelOp] {
        var current = program
        var chunk = max(1, current.count / 2)
        while true {
            var removedAny = false
            var start = 0
            while start < current.count {
                let end = min(current.count, start + chunk)
                var candidate = current
                candidate.removeSubrange(start..<end)
                if stillFails(candidate) {
                    current = candidate
                    removedAny = true
                } else {
                    start = end
                }
            }
            if chunk == 1 && !removedAny { return current }
            if !removedAny { chunk = max(1, chunk / 2) }
        }
    }
}
