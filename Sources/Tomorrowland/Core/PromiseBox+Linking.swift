/// A callback node that resolves another promise of the same type with the source's result,
/// inline and without a context hop (`makeChild`, `tap()`, `ignoringCancel`,
/// `Resolver.resolve(with:)`, the promise a `flatMap` callback returns).
final class PipeNode<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    let target: PromiseBox<Value, Error>

    init(target: PromiseBox<Value, Error>) {
        self.target = target
    }

    override func fire(source: AnyObject, isSynchronous: Bool) -> ReadyCallbacks? {
        target.settle(PromiseBox<Value, Error>.resolvedResult(of: source))
    }
}

extension PromiseBox {
    /// Makes this box a propagating observer of `upstream`: `upstream` counts one more observer,
    /// and the first cancel request on this box takes it away again (D1).
    ///
    /// The link back to `upstream` is weak: a child never keeps its upstream alive.
    func propagateCancel<UpstreamValue, UpstreamError>(to upstream: PromiseBox<UpstreamValue, UpstreamError>) {
        upstream.addObserver()
        addCancelHandler(.inline { [weak upstream] in upstream?.removeObserver() })
    }

    /// Pipes `inner` into this box, as a propagating observer of `inner`.
    ///
    /// - Returns: This box's callbacks, ready to run, when `inner` was already resolved.
    func adopt(_ inner: PromiseBox<Value, Error>) -> ReadyCallbacks? {
        propagateCancel(to: inner)
        return inner.registerReturningReady(PipeNode(target: self))
    }
}
