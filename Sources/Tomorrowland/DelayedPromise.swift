/// A promise whose handler does not run until the promise is first asked for.
///
/// Create it like a ``Promise``, with a context and a handler; nothing runs until the first
/// access to ``promise``, which starts the handler on the context. Every access returns the same
/// promise. Two `DelayedPromise` values are equal when they are copies of one another.
///
/// The `DelayedPromise` is one of the promise's handles: automatic cancellation needs it and
/// every copy of ``promise`` to be gone.
public struct DelayedPromise<Value, Error>: Equatable {
    /// The resolver the handler receives.
    public typealias Resolver = Promise<Value, Error>.Resolver

    private let storage: DelayedPromiseStorage<Value, Error>

    /// A delayed promise that runs `handler` on `context` when ``promise`` is first accessed.
    ///
    /// - Parameters:
    ///   - context: Where `handler` runs. The start is an asynchronous trigger: `.immediate`
    ///     runs `handler` inside the first ``promise`` access (with
    ///     ``PromiseContext/isExecutingNow`` false), `.nowOr(x)` runs it on `x`, every other
    ///     context runs it asynchronously.
    ///   - fileID: Where the promise is made, for ``PendingPromiseTracking`` (which lists it once
    ///     started); leave the default.
    ///   - line: The line it is made on, as `fileID`.
    ///   - handler: Receives the resolver. It is released after it runs, or when the
    ///     `DelayedPromise` is dropped without ever being accessed.
    @preconcurrency
    public init(
        on context: PromiseContext, fileID: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (_ resolver: Resolver) -> Void
    ) {
        storage = DelayedPromiseStorage(context: context, fileID: fileID, line: line, handler: handler)
    }

    /// The promise, started by the first access (from any thread; exactly one access starts it).
    public var promise: Promise<Value, Error> {
        storage.start()
        return storage.promise
    }

    /// Whether both are copies of the same delayed promise.
    public static func == (lhs: DelayedPromise, rhs: DelayedPromise) -> Bool {
        lhs.storage === rhs.storage
    }
}

/// A `DelayedPromise` of `Sendable` values may cross threads.
/// The box behind it is thread-safe: CoreInvariants: "Fields read without the lock".
extension DelayedPromise: @unchecked Sendable where Value: Sendable, Error: Sendable {}

@available(*, unavailable, message: "Use DelayedPromise(on:_:) instead")
extension DelayedPromise {
    /// Unavailable: name the context with `DelayedPromise(on:_:)`.
    public init(_ handler: @escaping @Sendable (_ resolver: Resolver) -> Void) {
        fatalError()
    }
}

/// A delayed promise whose error is any `Swift.Error`.
public typealias StdDelayedPromise<Value> = DelayedPromise<Value, Swift.Error>

/// What all copies of one `DelayedPromise` share: the promise's handle (its seal), the context
/// and the handler until it starts.
///
/// - Important: `@unchecked Sendable`: `handler` is only touched under `lock` (after init), and
///   the rest is immutable (the promise's storage is thread-safe).
final class DelayedPromiseStorage<Value, Error>: @unchecked Sendable {
    /// The one handle of the promise, so that the `DelayedPromise` counts as a handle (G5).
    let promise: Promise<Value, Error>
    private let context: PromiseContext
    private let lock = SpinLock()
    private var handler: (@Sendable (Promise<Value, Error>.Resolver) -> Void)?

    init(
        context: PromiseContext, fileID: StaticString, line: UInt,
        handler: @escaping @Sendable (Promise<Value, Error>.Resolver) -> Void
    ) {
        promise = Promise(box: PromiseBox.makeDelayedRoot(fileID: fileID, line: line, context: context))
        self.context = context
        // B10: the handler runs with the context current where the delayed promise was made.
        if CallbackContextPropagation.isOn {
            self.handler = CallbackContextPropagation.captureCurrent().wrapping(handler)
        } else {
            self.handler = handler
        }
    }

    /// Leaves the delayed state and starts the handler, the first time only.
    func start() {
        let box = promise.box
        // The box's own state transition decides the one winner; cancel requests count from
        // here on.
        guard box.leaveDelayedState() else { return }
        guard let handler = lock.withLock({ self.handler.take() }) else { return }
        context.execute(isSynchronous: false) { handler(Promise<Value, Error>.Resolver(box: box)) }
    }
}
