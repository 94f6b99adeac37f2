/// The callback node of `tap(on:token:_:)`: the user's closure, its context and its token in
/// one allocation.
///
/// ``ObserverNode`` holds a closure that wraps the user's; this node stores the user's closure
/// itself, and a thin `invoke` function made where `Value` and `Error` are known, so that reading
/// the result is specialised code even though this class's own methods are generic.
@usableFromInline
final class TapNode<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    @usableFromInline
    typealias Invoke = (_ node: TapNode<Value, Error>, _ source: PromiseCore) -> Void

    @usableFromInline
    let context: PromiseContext
    @usableFromInline
    let tokenGuard: TokenGuard?
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
        self.tokenGuard = tokenGuard
        self.onComplete = onComplete
        invoke = { node, source in
            let onComplete = node.onComplete!
            node.onComplete = nil
            if node.tokenGuard?.isValid ?? true {
                onComplete(PromiseBox<Value, Error>.resolvedResult(of: source))
            }
        }
        super.init()
    }

    @usableFromInline
    override func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        // The common case first, without copying the context (a copy retains the executor).
        if case .executor(let executor) = context {
            submitAsJob(to: executor, source: source)
            return nil
        }
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
