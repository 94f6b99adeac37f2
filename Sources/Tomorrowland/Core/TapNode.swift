/// The callback node of `tap(on:token:_:)`: the user's closure and its context in one
/// allocation (80 bytes of heap).
///
/// ``ObserverNode`` holds a closure that wraps the user's; this node stores the user's closure
/// itself, and a thin `invoke` function made where `Value` and `Error` are known, so that reading
/// the result is specialised code even though this class's own methods are generic.
///
/// A token's guard is not a field: `invoke` captures it when there is one (one more allocation,
/// for taps with a token only). A field would make every tap 16 bytes larger, past glibc's
/// 80-byte size class.
@usableFromInline
final class TapNode<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    @usableFromInline
    typealias Invoke = (_ node: TapNode<Value, Error>, _ source: PromiseCore) -> Void

    @usableFromInline
    let context: PromiseContext
    /// Taken by whoever runs it, so that it is released on its context (B7).
    @usableFromInline
    @exclusivity(unchecked)
    var onComplete: (@Sendable (PromiseResult<Value, Error>) -> Void)?
    @usableFromInline
    let invoke: Invoke

    @inlinable
    init(
        context: PromiseContext, tokenGuard: TokenGuard?,
        onComplete: @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) {
        self.context = context
        self.onComplete = onComplete
        if let tokenGuard {
            invoke = { node, source in
                let onComplete = node.takeOnComplete()
                if tokenGuard.isValid {
                    onComplete(PromiseBox<Value, Error>.resolvedResult(of: source))
                }
            }
        } else {
            // Captures nothing: a thin function, no allocation.
            invoke = { node, source in
                let onComplete = node.takeOnComplete()
                onComplete(PromiseBox<Value, Error>.resolvedResult(of: source))
            }
        }
        super.init()
    }

    /// Takes the closure out, so that the caller releases it (on its context).
    ///
    /// `!` and an assignment, not `Optional.take()`: a generic method hands a closure back at
    /// the most general abstraction, and calling it then allocates a reabstraction thunk.
    @inlinable
    @inline(__always)
    func takeOnComplete() -> @Sendable (PromiseResult<Value, Error>) -> Void {
        let onComplete = self.onComplete!
        self.onComplete = nil
        return onComplete
    }

    @usableFromInline
    override func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        // The common case first, without copying the context (a copy retains the executor).
        if submitAsJob(onExecutorOf: context, source: source) { return nil }
        switch context.route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            runInline(isExecutingNow: flag) { invoke(self, source) }
        case .executor(let executor):
            submitAsJob(to: executor, source: source)
        }
        return nil
    }

    override func run(source: PromiseCore) {
        invoke(self, source)
    }
}
