/// How the core runs work on a context: inline, or handed to an executor.
enum ContextRoute {
    /// Run on the calling thread. `isExecutingNow` is the value of the flag while it runs,
    /// `nil` to leave the caller's value (an `.immediate` callback triggered synchronously).
    case inline(isExecutingNow: Bool?)
    /// Submit to the executor.
    case executor(any PromiseExecutor)
}

extension PromiseContext {
    /// Where work triggered now on this context runs.
    ///
    /// - Parameter isSynchronous: True when the trigger is synchronous (a callback registered on
    ///   an already-resolved promise, or a `Promise(on:_:)` handler).
    @inline(__always)
    func route(isSynchronous: Bool) -> ContextRoute {
        switch self {
        case .immediate:
            return .inline(isExecutingNow: isSynchronous ? nil : false)
        case .nowOr(let inner):
            return isSynchronous ? .inline(isExecutingNow: true) : inner.route(isSynchronous: false)
        default:
            return .executor(executor)
        }
    }

    /// Whether this is ``immediate``. Inlinable: a `map` link's handler asks, on every
    /// resolution, whether it may run its callback at once (a borrowed `switch`, no copy).
    @inlinable
    var isImmediate: Bool {
        switch self {
        case .immediate: return true
        default: return false
        }
    }

    /// The executor behind an asynchronous context.
    ///
    /// `.immediate` and `.nowOr` have no executor of their own: `.immediate` maps to `.auto`'s
    /// (evaluated now), `.nowOr(x)` to `x`'s. Timers on those contexts use this, as
    /// Tomorrowland's timers did.
    public var executor: any PromiseExecutor {
        switch self {
        case .main: return MainQueueExecutor.shared
        case .background: return DispatchQueueExecutor.background
        case .utility: return DispatchQueueExecutor.utility
        case .default: return DispatchQueueExecutor.default
        case .userInitiated: return DispatchQueueExecutor.userInitiated
        case .userInteractive: return DispatchQueueExecutor.userInteractive
        case .queue(let queue): return DispatchQueueExecutor(queue: queue)
        case .operationQueue(let queue): return OperationQueueExecutor(queue: queue)
        case .executor(let executor): return executor
        case .immediate: return PromiseContext.auto.executor
        case .nowOr(let inner): return inner.executor
        }
    }

    /// Runs `work` on this context.
    ///
    /// - Parameters:
    ///   - isSynchronous: Whether the trigger is synchronous (see ``route(isSynchronous:)``).
    ///   - work: The work. Inline routes run it before returning; executors run it later with
    ///     `isExecutingNow` false.
    @usableFromInline
    func execute(isSynchronous: Bool, _ work: @escaping @Sendable () -> Void) {
        switch route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            runInline(isExecutingNow: flag, work)
        case .executor(let executor):
            executor.submit { ExecutionFlags.with(isExecutingNow: false, work) }
        }
    }
}

/// Runs `body` inline with the `isExecutingNow` flag a route asks for.
@inline(__always)
func runInline<R>(isExecutingNow flag: Bool?, _ body: () throws -> R) rethrows -> R {
    if let flag {
        return try ExecutionFlags.with(isExecutingNow: flag, body)
    }
    return try body()
}
