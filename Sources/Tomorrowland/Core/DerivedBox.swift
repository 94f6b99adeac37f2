/// The box of a promise derived from another one (`map`, `tap()`, `timeout`, …): a
/// ``ResultBox`` that is also the callback registered on its upstream, with the
/// ``PromiseCore/Handler`` that settles it.
///
/// A subclass of its own so that promises made with a resolver do not carry the handler's two
/// words. Its methods are unspecialised generic code, but they touch only non-generic fields.
///
/// The handler is a `let`: calling a closure stored in a `var` copies it for the call (a
/// `swift_retain` and a `swift_release` of its context, even a null one, twice per `map` link
/// on a loop), because the call could reassign the field;
/// a `let` is called in place. So a handler is never released before its box is, and must
/// not capture what B7 wants released on the callback's context: the user's closures live in
/// the ``CallbackBox`` instead, which hands them out to be released where they run.
@usableFromInline
class DerivedBox<Result: StoredPromiseResult>: ResultBox<Result>, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Fields read without the lock".
    /// Whether this box (a ``CallbackBox``) still holds its callback. Declared here, before
    /// ``handler``, so that it takes a byte of the padding after a small result (`Int`: the 7
    /// bytes before `handler`) instead of growing the ``CallbackBox``.
    @usableFromInline
    @exclusivity(unchecked)
    final var holdsCallback = false
    /// Whether the callback ran and this box now waits on the promise it returned (see
    /// ``adoptAfterCallback(_:)``): the handler's next `.arrive` is that promise resolving.
    /// Next to ``holdsCallback``, in the same padding.
    @usableFromInline
    @exclusivity(unchecked)
    final var isAdopting = false
    /// The work that settles this promise from its upstream's result (see the type's
    /// discussion).
    @usableFromInline
    let handler: Handler

    /// A pending derived box.
    @inlinable
    init(handler: @escaping Handler) {
        self.handler = handler
        super.init()
    }

    /// Fires this promise as a derived promise of `source` (see ``Handler``).
    @usableFromInline
    override final func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        switch handler(self, source, .arrive) {
        case .settled(let ready), .settledHandingOver(let ready):
            // `.settledHandingOver` answers `.arriveHandingOver` only.
            return ready
        case .settledInPlace(let head):
            // `.settledInPlace` answers `.run` only; kept correct all the same.
            return readyCallbacks(head)
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
            return runInline(isExecutingNow: flag) { readyCallbacks(handler(self, source, .run)) }
        case .executor(let executor):
            submitAsJob(to: executor, source: source)
            return nil
        }
    }

    /// ``fire(source:isSynchronous:)`` from a drain that hands its reference to this box over:
    /// released here, or kept by the job when the handler submits the box to an executor.
    @usableFromInline
    override final func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        switch handler(self, source, .arriveHandingOver) {
        case .settled(let ready):
            // The drain's reference, released as this call ends.
            // CoreInvariants: "Ownership in the drain".
            _ = Unmanaged.passUnretained(self).takeRetainedValue()
            return ready
        case .settledHandingOver(let ready):
            // The handler's settle took the drain's reference: `self` is not touched again.
            return ready
        case .settledInPlace(let head):
            // `.settledInPlace` answers `.run` only; kept correct all the same: the list takes a
            // reference of its own, and the drain's is released as this call ends.
            let owned = Unmanaged.passUnretained(self).takeRetainedValue()
            return owned.readyCallbacks(head)
        case .submitted:
            // The job holds the drain's reference now (and may already have run and released
            // it): `self` is not touched again.
            return nil
        case .dispatch(let context):
            // The drain's reference, owned here: released as this call ends.
            // CoreInvariants: "Ownership in the drain".
            let owned = Unmanaged.passUnretained(self).takeRetainedValue()
            return owned.dispatch(to: context, source: source, isSynchronous: false)
        }
    }

    /// Pipes `inner`, the promise this promise's callback returned, into this promise
    /// (`flatMap` and its relatives), as a propagating observer of `inner`.
    ///
    /// The box registers itself on `inner`, and its handler, seeing ``isAdopting``, copies the
    /// result: no ``PipeNode`` to allocate. That is sound because the callback has run: the box
    /// is in no list (its upstream's list was taken when it fired).
    ///
    /// - Important: Call only from the `.run` stage of this box's handler, and only with a
    ///   handler that handles ``isAdopting`` (``Promise/deriveCallback(on:storing:whenSuppressed:passThrough:body:)``).
    /// - Returns: This box's callbacks, ready to run, when `inner` was already resolved.
    @inlinable
    final func adoptAfterCallback(_ inner: ResultBox<Result>) -> ReadyCallbacks? {
        // The upstream resolved: that is why the callback ran.
        propagateCancel(to: inner, replacingResolvedUpstream: true)
        isAdopting = true
        return inner.registerReturningReady(self)
    }

    /// The executor will never run the callback: release it here and cancel this promise, so
    /// that nothing waits on it forever.
    override final func abandonWithoutRunning(source: PromiseCore?) {
        // A derived box is always submitted with its source (`submitAsJob(to:source:)`).
        // CoreInvariants: "The meanings of next".
        CallbackDrain.run(handler(self, source.unsafelyUnwrapped, .abandon).ready)
    }

    /// Runs the derived promise's callback on its context, and what that makes ready.
    override final func run(source: PromiseCore) {
        switch handler(self, source, .run) {
        case .settledInPlace(let head):
            // The box's own callbacks, with no reference taken for them: the job's executor holds
            // this box for the length of its `run()` call, which this drain ends within.
            // CoreInvariants: "Ownership in the drain".
            CallbackDrain.run(borrowing: self, head: head)
        case .settled(let ready), .settledHandingOver(let ready):
            CallbackDrain.run(ready)
        case .dispatch, .submitted:
            return
        }
    }

    /// The callbacks an outcome made ready, as a list that holds its own reference to its source:
    /// `head` of ``HandlerOutcome/settledInPlace(_:)`` is this box's, with no reference taken.
    @inline(__always)
    final func readyCallbacks(_ outcome: HandlerOutcome) -> ReadyCallbacks? {
        if case .settledInPlace(let head) = outcome { return readyCallbacks(head) }
        return outcome.ready
    }

    /// This box's callbacks `head`, made ready by ``ResultBox/settleInPlace(_:)``, as a list that
    /// holds a reference of its own to the box; the list takes over the reference to `head`.
    @inline(__always)
    final func readyCallbacks(_ head: Unmanaged<PromiseCallbackNode>?) -> ReadyCallbacks? {
        guard let head else { return nil }
        return ReadyCallbacks(source: self, head: head.takeRetainedValue())
    }
}
