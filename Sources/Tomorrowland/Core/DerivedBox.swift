/// The box of a promise derived from another one (`map`, `tap()`, `timeout`, …): a
/// ``ResultBox`` that is also the callback registered on its upstream, with the
/// ``PromiseCore/Handler`` that settles it.
///
/// A subclass of its own so that promises made with a resolver do not carry the handler's two
/// words. Its methods are unspecialised generic code, but they touch only non-generic fields.
@usableFromInline
class DerivedBox<Result: StoredPromiseResult>: ResultBox<Result>, @unchecked Sendable {
    /// Whether this box (a ``CallbackBox``) still holds its callback. Declared here, before
    /// ``handler``, so that it takes a byte of the padding after a small result (`Int`: the 7
    /// bytes before `handler`) instead of growing the ``CallbackBox``.
    @usableFromInline
    @exclusivity(unchecked)
    final var holdsCallback = false
    /// The work that settles this promise from its upstream's result. Belongs to whoever owns
    /// the node (see ``PromiseCallbackNode``), not to the lock.
    @usableFromInline
    @exclusivity(unchecked)
    final var handler: Handler?

    /// A pending derived box.
    @inlinable
    init(handler: @escaping Handler) {
        self.handler = handler
        super.init()
    }

    /// Fires this promise as a derived promise of `source` (see ``Handler``).
    @usableFromInline
    override final func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        // The temporary reference the call takes is dropped before anything is dispatched, so
        // that the job holds the only reference to the user's closure (released on its context).
        // (A handler that returns `.submitted` captures nothing: there is nothing to release.)
        // `!`, not `unsafelyUnwrapped`: the generic property hands the closure back at the most
        // general abstraction, and calling it then allocates a reabstraction thunk every time.
        switch handler!(self, source, .arrive) {
        case .settled(let ready):
            handler = nil
            return ready
        case .submitted:
            return nil
        case .dispatch(let context):
            return dispatch(to: context, source: source, isSynchronous: isSynchronous)
        }
    }

    /// Runs the callback inline or submits this box to an executor, as `context` routes it: the
    /// `.dispatch` outcome of the handler's `.arrive` stage.
    @inline(__always)
    private final func dispatch(to context: PromiseContext, source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks?
    {
        switch context.route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            let work = handler!
            handler = nil
            return runInline(isExecutingNow: flag) { work(self, source, .run).ready }
        case .executor(let executor):
            submitAsJob(to: executor, source: source)
            return nil
        }
    }

    /// ``fire(source:isSynchronous:)`` from a drain that hands its reference to this box over:
    /// released here, or kept by the job when the handler submits the box to an executor.
    @usableFromInline
    override final func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        switch handler!(self, source, .arriveHandingOver) {
        case .settled(let ready):
            handler = nil
            // The drain's reference, released as this call ends.
            _ = Unmanaged.passUnretained(self).takeRetainedValue()
            return ready
        case .submitted:
            // The job holds the drain's reference now.
            return nil
        case .dispatch(let context):
            // The drain's reference, owned here: released as this call ends.
            let owned = Unmanaged.passUnretained(self).takeRetainedValue()
            return owned.dispatch(to: context, source: source, isSynchronous: false)
        }
    }

    /// Pipes `inner`, the promise this promise's callback returned, into this promise
    /// (`flatMap` and its relatives), as a propagating observer of `inner`.
    ///
    /// The box registers itself on `inner`, with a handler that copies the result: no
    /// ``PipeNode`` to allocate. That is sound because the callback has run: the handler is
    /// spent, and the box is in no list (its upstream's list was taken when it fired).
    ///
    /// - Important: Call only from the `.run` stage of this box's handler.
    /// - Returns: This box's callbacks, ready to run, when `inner` was already resolved.
    @inlinable
    final func adoptAfterCallback(_ inner: ResultBox<Result>) -> ReadyCallbacks? {
        // The upstream resolved: that is why the callback ran.
        propagateCancel(to: inner, replacingResolvedUpstream: true)
        handler = { child, source, _ in
            .settled(
                unsafeDowncast(child, to: ResultBox<Result>.self).settle(ResultBox<Result>.resolvedResult(of: source)))
        }
        return inner.registerReturningReady(self)
    }

    /// The executor will never run the callback: release it here and cancel this promise, so
    /// that nothing waits on it forever.
    override final func abandonWithoutRunning(source: PromiseCore?) {
        let work = handler!
        handler = nil
        // A derived box is always submitted with its source (`submitAsJob(to:source:)`).
        CallbackDrain.run(work(self, source.unsafelyUnwrapped, .abandon).ready)
    }

    /// Runs the derived promise's callback on its context, and what that makes ready.
    override final func run(source: PromiseCore) {
        let work = handler!
        handler = nil
        CallbackDrain.run(work(self, source, .run).ready)
    }
}
