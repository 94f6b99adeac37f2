// Swift Concurrency bridges: awaiting a promise, and a promise that runs async work.
//
// The rules these follow are written up in the DocC article "SwiftConcurrency".

/// Why awaiting a promise with ``Promise/typedValue`` failed: the promise was rejected, or
/// cancelled.
///
/// The typed-throws counterpart of `Promise.value`: `value` throws the promise's error itself
/// (and `CancellationError` for a cancelled promise) as `any Error`; `typedValue` throws this
/// enum, whose cases a `do throws(PromiseAwaitError<E>)` block can switch over exhaustively.
public enum PromiseAwaitError<Error: Sendable>: Swift.Error {
    /// The promise was rejected with this error.
    case rejected(Error)
    /// The promise was cancelled.
    case cancelled

    /// The error, if the promise was rejected.
    public var error: Error? {
        if case .rejected(let error) = self { return error }
        return nil
    }

    /// Whether the promise was cancelled.
    public var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }
}

extension PromiseAwaitError: Equatable where Error: Equatable {}
extension PromiseAwaitError: Hashable where Error: Hashable {}

// MARK: - Awaiting a promise

extension Promise where Value: Sendable, Error: Sendable {
    /// The promise's result, once it has one: waits without blocking a thread.
    ///
    /// Never throws: a rejection is `.error`, a cancelled promise is `.cancelled`. (The
    /// synchronous ``result`` reads the result *now*, `nil` while pending; this is its
    /// asynchronous counterpart, named apart so that code reading `result` in an async function
    /// keeps its meaning.)
    ///
    /// Awaiting counts as one observer of the promise for automatic cancellation (as a
    /// `makeChild()` would). If the awaiting task is cancelled, that observer requests
    /// cancellation: the promise's `onRequestCancel` handlers run once every observer has asked
    /// and no handle to the promise is left. The getter consumes its handle, so
    /// `await fetch().resolvedResult` leaves none; a handle you keep in a variable pins the
    /// promise, exactly as in Tomorrowland. The wait still ends only with the promise's own
    /// result, which may be a value: cancellation is advisory.
    ///
    /// The awaiting task resumes on its own executor; nothing runs under a lock of the library.
    public var resolvedResult: PromiseResult<Value, Error> {
        consuming get async {
            await Self.waitForResult(of: consume self)
        }
    }

    /// The body of ``resolvedResult``, taking the caller's handle (a consuming getter that
    /// calls another consuming getter on `self` trips a compiler bug in Swift 6.3).
    static func waitForResult(of promise: consuming Promise) async -> PromiseResult<Value, Error> {
        if let result = promise.result {
            return result
        }
        // The observer. Made before the handler so that a cancellation arriving at any moment,
        // even before the wait starts, has something to ask through.
        let observer = promise.makeChild()
        // The awaiting task no longer holds a handle: the caller's temporary is gone, so the
        // observer's request can propagate (rule D1).
        _ = consume promise
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<PromiseResult<Value, Error>, Never>) in
                // A tap runs exactly once: with the result, or with `.cancelled` if the promise
                // dies unresolved. So the continuation resumes exactly once, on the resolving
                // thread, outside every lock (the core never calls out under one).
                observer.tap(on: .immediate) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            observer.requestCancel()
        }
    }
}

extension Promise where Value: Sendable, Error: Swift.Error {
    /// The promise's value, once it has one; throws its error, or `CancellationError` if it is
    /// cancelled.
    ///
    /// Throws untyped (`any Error`), as `Task.value` does, so that `catch is CancellationError`
    /// and `catch let error as MyError` read naturally. For exhaustive typed handling use
    /// ``typedValue``, which throws ``PromiseAwaitError``: one name cannot serve both, because a
    /// property cannot be overloaded on its thrown type, and making `value` typed would turn every
    /// `catch is CancellationError` into a never-matching pattern.
    ///
    /// Cancellation works as for ``resolvedResult``: cancelling the awaiting task requests
    /// cancellation through one observer, following the propagation rules. Runs no callback of
    /// yours; the awaiting task resumes on its own executor.
    public var value: Value {
        consuming get async throws {
            switch await Self.waitForResult(of: consume self) {
            case .value(let value): return value
            case .error(let error): throw error
            case .cancelled: throw CancellationError()
            }
        }
    }
}

extension Promise where Value: Sendable, Error == NoError {
    /// The promise's value, once it has one; throws `CancellationError` if it is cancelled.
    ///
    /// See ``resolvedResult`` for how cancellation crosses between the task and the promise.
    public var value: Value {
        consuming get async throws {
            switch await Self.waitForResult(of: consume self) {
            case .value(let value): return value
            case .cancelled: throw CancellationError()
            }
        }
    }
}

extension Promise where Value: Sendable, Error: Sendable {
    /// The promise's value, once it has one; throws a typed ``PromiseAwaitError``: `.rejected`
    /// with the promise's error, or `.cancelled`.
    ///
    /// Available for every `Sendable` error type, `Swift.Error` or not (`Promise<Int, String>`
    /// too). See ``resolvedResult`` for how cancellation crosses between the task and the promise.
    public var typedValue: Value {
        consuming get async throws(PromiseAwaitError<Error>) {
            switch await Self.waitForResult(of: consume self) {
            case .value(let value): return value
            case .error(let error): throw .rejected(error)
            case .cancelled: throw .cancelled
            }
        }
    }
}

// MARK: - Promises of async work

extension Promise where Value: Sendable, Error: Swift.Error {
    /// Creates a promise that runs `operation` in a new top-level `Task` and resolves with its
    /// outcome.
    ///
    /// The returned value fulfils the promise, a thrown error rejects it, and a thrown
    /// `CancellationError` cancels it. ``requestCancel()`` (directly or through automatic
    /// propagation) cancels the task; the operation sees it as Swift task cancellation
    /// (`Task.isCancelled`, `Task.checkCancellation()`, cancellable awaits), and the promise
    /// resolves with whatever the operation then returns or throws.
    ///
    /// - Parameters:
    ///   - priority: The task's priority.
    ///   - fileID: Where the promise is made, for ``PendingPromiseTracking``; leave the default.
    ///   - line: The line it is made on, as `fileID`.
    ///   - operation: The work. Runs where `Task.init` would run it: on the actor it is isolated
    ///     to, otherwise on the global concurrent executor.
    @discardableResult
    public init(
        priority: TaskPriority? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        operation: sending @escaping @isolated(any) () async throws(Error) -> Value
    ) {
        let (promise, resolver) = Promise.makeWithResolver(fileID: fileID, line: line)
        let task = Task(priority: priority) {
            await Self.settle(resolver, with: operation)
        }
        resolver.onRequestCancel(on: .immediate) { _ in task.cancel() }
        self = promise
    }

    /// Creates a promise that runs `operation` in a new `Task` preferring `executor`, and
    /// resolves with its outcome.
    ///
    /// Like `init(priority:operation:)`, but nonisolated parts of the operation run on
    /// `executor` (an `EventLoop` or a `TestLoop`, for example): see
    /// `Task(executorPreference:priority:operation:)`. The task keeps `executor` alive.
    /// `fileID` and `line` are for ``PendingPromiseTracking``: leave the defaults.
    @discardableResult
    public init(
        executorPreference executor: any TaskExecutor,
        priority: TaskPriority? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        operation: sending @escaping () async throws(Error) -> Value
    ) {
        let (promise, resolver) = Promise.makeWithResolver(fileID: fileID, line: line)
        let task = Task(executorPreference: executor, priority: priority) {
            await Self.settle(resolver, with: operation)
        }
        resolver.onRequestCancel(on: .immediate) { _ in task.cancel() }
        self = promise
    }

    private static func settle(
        _ resolver: Resolver, with operation: () async throws(Error) -> Value
    ) async {
        do throws(Error) {
            resolver.fulfill(with: try await operation())
        } catch {
            if error is CancellationError {
                resolver.cancel()
            } else {
                resolver.reject(with: error)
            }
        }
    }
}

extension Promise where Value: Sendable, Error == NoError {
    /// Creates a promise that runs a non-throwing `operation` in a new top-level `Task` and
    /// fulfils with what it returns.
    ///
    /// ``requestCancel()`` cancels the task; the operation decides what to return then.
    ///
    /// - Parameters:
    ///   - priority: The task's priority.
    ///   - fileID: Where the promise is made, for ``PendingPromiseTracking``; leave the default.
    ///   - line: The line it is made on, as `fileID`.
    ///   - operation: The work. Runs where `Task.init` would run it: on the actor it is isolated
    ///     to, otherwise on the global concurrent executor.
    @discardableResult
    public init(
        priority: TaskPriority? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        operation: sending @escaping @isolated(any) () async -> Value
    ) {
        let (promise, resolver) = Promise.makeWithResolver(fileID: fileID, line: line)
        let task = Task(priority: priority) {
            resolver.fulfill(with: await operation())
        }
        resolver.onRequestCancel(on: .immediate) { _ in task.cancel() }
        self = promise
    }
}
