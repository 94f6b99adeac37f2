/// A promise of a `Value`, or an `Error`, or cancellation, that arrives later.
///
/// Tomorrowland's `Promise`, on Linux. `Error` is unconstrained: `Promise<Int, String>` is fine.
/// Every callback method takes a ``PromiseContext`` saying where the callback runs, and an
/// optional ``PromiseInvalidationToken`` that suppresses it. Promises are thread-safe: any method
/// may be called from any thread.
///
/// Two `Promise` values are equal when they are the same promise (copies of one value).
///
/// The methods that derive a promise through a callback (`map`, `flatMap`, `then`, `catch`,
/// `recover`, …) consume the value they are called on. Code reads as usual: a value still used
/// after the call is copied for it. A chain built by reassignment, `promise = promise.map { … }`,
/// then hands one handle down its links instead of making one per link.
public struct Promise<Value, Error> {
    /// The handle all copies of this value share. A `var` only so that a deriving method that
    /// consumes the last copy can hand it to the promise it returns (``PromiseSeal/retarget(to:)``).
    @usableFromInline
    var seal: PromiseSeal

    @inlinable
    var box: PromiseBox<Value, Error> {
        // A seal is made only by `init(box:)` and retargeted only with a promise of its new type
        // (`deriveCallback`), or moved from a promise of the same type.
        unsafeDowncast(seal.core, to: PromiseBox<Value, Error>.self)
    }

    /// Wraps a box in its one handle. Call once per box: the handle's death seals the box.
    @inlinable
    init(box: PromiseBox<Value, Error>) {
        seal = PromiseSeal(core: box)
    }

    @usableFromInline
    init(seal: PromiseSeal) {
        self.seal = seal
    }

    /// Returns a pending promise and the resolver that settles it.
    ///
    /// - Parameters:
    ///   - fileID: Where the promise is made, for ``PendingPromiseTracking``; leave the default.
    ///   - line: The line it is made on, as `fileID`.
    @inlinable
    public static func makeWithResolver(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> (Promise<Value, Error>, Promise<Value, Error>.Resolver) {
        let box = PromiseBox<Value, Error>.makeRoot(fileID: fileID, line: line, context: nil)
        return (Promise(box: box), Resolver(box: box))
    }

    /// Creates a promise and runs `handler` on `context` to resolve it.
    ///
    /// - Parameters:
    ///   - context: Where `handler` runs. `.immediate` and `.nowOr(_:)` run it before the
    ///     initializer returns; every other context runs it asynchronously, `.main` included.
    ///   - fileID: Where the promise is made, for ``PendingPromiseTracking``; leave the default.
    ///   - line: The line it is made on, as `fileID`.
    ///   - handler: Receives the resolver. If the resolver is dropped unresolved, the promise is
    ///     cancelled once nothing else refers to it.
    @inlinable
    @preconcurrency
    public init(
        on context: PromiseContext, fileID: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (_ resolver: Resolver) -> Void
    ) {
        let box = PromiseBox<Value, Error>.makeRoot(fileID: fileID, line: line, context: context)
        self.init(box: box)
        // B10: while propagation is on, the handler runs with the context current here.
        if _slowPath(CallbackContextPropagation.isOn) {
            let captured = CallbackContextPropagation.captureCurrent()
            context.execute(isSynchronous: true) { captured.withRestored { handler(Resolver(box: box)) } }
            return
        }
        context.execute(isSynchronous: true) { handler(Resolver(box: box)) }
    }

    /// A promise that is already fulfilled with `value`.
    @inlinable
    public init(fulfilled value: Value) {
        self.init(box: PromiseBox(result: .value(value)))
    }

    /// A promise that is already rejected with `error`.
    @inlinable
    public init(rejected error: Error) {
        self.init(box: PromiseBox(result: .error(error)))
    }

    /// A promise that already has `result`.
    @inlinable
    public init(with result: PromiseResult<Value, Error>) {
        self.init(box: PromiseBox(result: result))
    }

    /// A promise that already has `result`.
    @available(*, deprecated, renamed: "init(with:)")
    public init(result: PromiseResult<Value, Error>) {
        self.init(with: result)
    }

    /// The result, or `nil` while the promise is unresolved.
    @inlinable
    public var result: PromiseResult<Value, Error>? {
        box.result
    }
}

extension Promise where Error == Swift.Error {
    /// Creates a promise and runs a throwing `handler` on `context` to resolve it.
    ///
    /// An error thrown by `handler` rejects the promise, unless it is resolved already.
    /// `fileID` and `line` are for ``PendingPromiseTracking``: leave the defaults.
    @preconcurrency
    public init(
        on context: PromiseContext, fileID: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (_ resolver: Resolver) throws -> Void
    ) {
        self.init(on: context, fileID: fileID, line: line) { (resolver: Resolver) -> Void in
            do {
                try handler(resolver)
            } catch {
                resolver.reject(with: error)
            }
        }
    }
}

extension Promise where Error: Swift.Error {
    /// A promise that already has the outcome of a `Swift.Result`.
    @inlinable
    public init(with result: Result<Value, Error>) {
        self.init(with: PromiseResult(result))
    }
}

extension Promise: Equatable {
    /// Whether both are the same promise (copies of one value). Two promises with equal results
    /// are not equal.
    @inlinable
    public static func == (lhs: Promise, rhs: Promise) -> Bool {
        lhs.seal.core === rhs.seal.core
    }
}

/// A promise of `Sendable` values may cross threads: the storage behind it is thread-safe.
/// CoreInvariants: "Fields read without the lock".
extension Promise: @unchecked Sendable where Value: Sendable, Error: Sendable {}

/// A promise whose error is any `Swift.Error`.
public typealias StdPromise<Value> = Promise<Value, Swift.Error>

@available(*, unavailable, message: "Use Promise(on:_:) instead")
extension Promise {
    /// Unavailable: name the context with `Promise(on:_:)`.
    public init(_ handler: @escaping @Sendable (_ resolver: Resolver) -> Void) {
        fatalError()
    }
}
