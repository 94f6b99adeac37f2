/// The typed storage of one promise: a ``PromiseCore`` plus the result.
///
/// Spelled `PromiseBox<Value, Error>` everywhere (a type alias): the class itself is generic over
/// the whole result type, `ResultBox<PromiseResult<Value, Error>>`, for the sake of its deinit.
/// A class's deinit is unspecialised generic code. Destroying a stored
/// `PromiseResult<Value, Error>` there needs that enum's type metadata, which the runtime has to
/// look up in its generic-metadata cache, a measurable share of every `map` link. With the
/// result type as the class's own generic parameter, its
/// metadata sits in the class metadata the deinit already has: no lookup.
@usableFromInline
typealias PromiseBox<Value, Error> = ResultBox<PromiseResult<Value, Error>>

/// What ``ResultBox`` needs to know about the result it stores (only `PromiseResult` conforms).
@usableFromInline
protocol StoredPromiseResult {
    /// The result of a promise that was cancelled.
    static var cancelledResult: Self { get }
    /// Whether this is the cancelled result.
    var isCancelledResult: Bool { get }
}

extension PromiseResult: StoredPromiseResult {
    @inlinable
    static var cancelledResult: PromiseResult { .cancelled }

    @inlinable
    var isCancelledResult: Bool { isCancelled }
}

/// The class behind ``PromiseBox``; see there why it is generic over the result type.
///
/// - Important: `storedResult` is written once under the lock before the status becomes
///   `.resolved` and never changes afterwards, so it may be read without the lock by anyone who
///   observed `.resolved` under the lock, or was handed the box by such a thread.
///
/// Not `final` only so that ``DerivedBox`` and ``CallbackBox`` can add the fields of a derived
/// promise; its members are final.
@usableFromInline
class ResultBox<Result: StoredPromiseResult>: PromiseCore, @unchecked Sendable {
    // @unchecked Sendable: see the invariant above; CoreInvariants: "Fields read without the lock".
    /// The result; meaningful only once the status is `.resolved` (cancelled before).
    ///
    /// Not an optional on purpose: destroying an optional in the generic deinit would cost a
    /// metadata lookup for `Optional<Result>`.
    @usableFromInline
    @exclusivity(unchecked)
    final var storedResult: Result

    /// A pending box.
    @inlinable
    init() {
        storedResult = .cancelledResult
        super.init(status: .pending)
    }

    /// A box that is already resolved.
    @inlinable
    init(result: Result) {
        storedResult = result
        super.init(status: .resolved)
        isCancelledResult = result.isCancelledResult
    }

    /// A box in the delayed state (`DelayedPromise`, `PromiseOperation`).
    init(delayed: Void) {
        storedResult = .cancelledResult
        super.init(status: .delayed)
    }

    deinit {
        // Unresolved storage that dies is cancelled: its callbacks see `.cancelled`. Nothing
        // else can reach the box now, so no lock is needed. `self` must not escape a deinit, so
        // the callbacks read their result from a stand-in box.
        guard status != .resolved, callbackHead != nil else { return }
        runCallbacksCancelled()
    }

    /// The callbacks of a box that dies unresolved, run with `.cancelled`.
    ///
    /// Out of line on purpose: inlined, the deinit set up the stack frame of this rare path (a
    /// stand-in box, a result of a type known only from the metadata) on every call.
    @inline(never)
    private final func runCallbacksCancelled() {
        CallbackDrain.run(ReadyCallbacks(source: ResultBox(result: .cancelledResult), head: takeListOfDyingBox()))
    }

    /// Takes the list of a box that is dying unresolved, in registration order, once every
    /// promise linked to this one dropped its link.
    final func takeListOfDyingBox() -> PromiseCallbackNode? {
        guard let head = callbackHead.take() else { return nil }
        // Before anything runs and before this memory is freed, the promises linked to this one
        // drop their links (see ``UpstreamLink``): they will not hold this box, as the callbacks
        // of a resolved box would.
        // CoreInvariants: "The link rule", third point.
        let dying = Unmanaged.passUnretained(self).toOpaque()
        var node: PromiseCallbackNode? = head
        while let current = node {
            current.unlinkFromDyingUpstream(dying)
            node = current.next
        }
        return PromiseCallbackNode.reversed(head)
    }

    // MARK: Result

    /// The result, or `nil` while unresolved.
    @inlinable
    final var result: Result? {
        lock.withLock { status == .resolved ? storedResult : nil }
    }

    /// The result of a box known to be resolved (see the type's invariant).
    @inlinable
    final var resolvedResult: Result {
        storedResult
    }

    /// The result of `source`, a resolved box of this type, handed to a callback node.
    @inlinable
    static func resolvedResult(of source: PromiseCore) -> Result {
        // CoreInvariants: "Fields read without the lock": `source` is a resolved box of this type.
        unsafeDowncast(source, to: ResultBox<Result>.self).resolvedResult
    }

    // MARK: Resolving

    /// Resolves the box if it is not resolved yet and returns its callbacks, ready to run.
    ///
    /// - Returns: `nil` when the box was already resolved (first resolution wins) or has no
    ///   callbacks. The caller must run what it gets (``CallbackDrain``), or return it to a drain.
    @inlinable
    final func settle(_ result: Result) -> ReadyCallbacks? {
        // The lock block written out rather than through `storeIfPending(_:)`: routed through
        // it, the optimiser lays out the create-tap-fulfil path (W3's gate) longer.
        let taken: Taken? = lock.withLock {
            guard status != .resolved else { return nil }
            storedResult = result
            return markResolvedLocked(cancelled: result.isCancelledResult)
        }
        // Cancel handlers (in `taken`) are released here, outside the lock.
        guard let taken, let head = taken.head else { return nil }
        return ReadyCallbacks(source: self, head: PromiseCallbackNode.reversed(head))
    }

    /// ``settle(_:)`` by a caller that hands over its reference to this box (a drain's, the
    /// ``HandlerStage/arriveHandingOver`` stage): the returned list holds that reference as its
    /// source instead of a new one, or it is released here when there is nothing to run. Either
    /// way the caller must not touch the box after this call.
    /// CoreInvariants: "Ownership in the drain".
    @inlinable
    final func settleHandingOver(_ result: Result) -> ReadyCallbacks? {
        let head = storeIfPending(result)
        // The caller's reference, owned from here on.
        let owned = Unmanaged.passUnretained(self).takeRetainedValue()
        guard let head else { return nil }
        return ReadyCallbacks(source: consume owned, head: PromiseCallbackNode.reversed(head))
    }

    /// ``settle(_:)`` for a caller that holds this box for as long as the callbacks run (a job
    /// running on its executor, ``HandlerOutcome/settledInPlace(_:)``): returns them, oldest first,
    /// without taking a reference to the box for them; the caller runs them with
    /// ``CallbackDrain/run(borrowing:head:)``.
    ///
    /// The first node comes unmanaged, with the list's reference to it (the caller must hand it
    /// on exactly once): carried in a managed payload, the outcome copied it out and released it,
    /// a retain and a release per link.
    @inlinable
    final func settleInPlace(_ result: Result) -> Unmanaged<PromiseCallbackNode>? {
        guard let head = storeIfPending(result) else { return nil }
        return Unmanaged.passRetained(PromiseCallbackNode.reversed(head))
    }

    /// Stores `result` and marks the box resolved, if it is not resolved yet (first resolution
    /// wins); returns the callbacks the resolution took (newest first, as stored), `nil` when the
    /// box was resolved already or has none. For a derived promise's box, which has no slot for a
    /// first callback (its callers, ``settleHandingOver(_:)`` and ``settleInPlace(_:)``, settle
    /// derived boxes only).
    ///
    /// The cancel handlers are taken out, and released once the lock is dropped (they may hold
    /// resolvers of this very promise), only when there are some: a field that stays `nil` is not
    /// destroyed, where a taken `nil` is a call of `swift_release` with `nil` on every resolution.
    @inlinable
    @inline(__always)
    final func storeIfPending(_ result: Result) -> PromiseCallbackNode? {
        assert(!hasFirstSlotCallback, "a root box settles through settle(_:)")
        lock.lock()
        guard !isResolvedLocked() else {
            lock.unlock()
            return nil
        }
        storedResult = result
        let taken = markResolvedLeavingHandlersLocked(cancelled: result.isCancelledResult)
        guard _slowPath(taken.hasHandlers) else {
            lock.unlock()
            return taken.head
        }
        let handlers = takeCancelHandlersLocked()
        lock.unlock()
        // Released here, outside the lock.
        _ = consume handlers
        return taken.head
    }

    /// ``settleInPlace(_:)`` for any box, a ``RootBox`` with a callback in its slot included
    /// (``PromiseCore/markResolvedLocked(cancelled:)``): for ``resolve(_:)``, whose caller holds
    /// the box while its callbacks run.
    @inlinable
    @inline(__always)
    final func settleInPlaceWithSlot(_ result: Result) -> Unmanaged<PromiseCallbackNode>? {
        // Written out as in `settle(_:)`.
        let taken: Taken? = lock.withLock {
            guard status != .resolved else { return nil }
            storedResult = result
            return markResolvedLocked(cancelled: result.isCancelledResult)
        }
        guard let taken, let head = taken.head else { return nil }
        return Unmanaged.passRetained(PromiseCallbackNode.reversed(head))
    }

    /// Resolves the box and runs its callbacks.
    @inlinable
    final func resolve(_ result: Result) {
        // The callbacks borrow this box as their source: the caller holds it for the length of
        // this call (the method's `self`), which the drain ends within.
        // CoreInvariants: "Ownership in the drain".
        CallbackDrain.run(borrowing: self, head: settleInPlaceWithSlot(result))
    }
}

/// The two calls of a derived promise's ``PromiseCore/Handler``.
@usableFromInline
enum HandlerStage {
    /// The upstream resolved; decide whether the callback must run (on the thread that fired).
    case arrive
    /// ``arrive`` from a ``CallbackDrain``, which hands its reference to the node over: a handler
    /// that submits the box as a job uses
    /// ``PromiseCallbackNode/submitAsJobHandingOver(onExecutorOf:source:)`` (or
    /// ``PromiseCallbackNode/submitOrDispatch(onExecutorOf:source:stage:)``), so that the job takes
    /// that reference instead of a new one (and then returns ``HandlerOutcome/submitted``).
    /// CoreInvariants: "Ownership in the drain".
    case arriveHandingOver
    /// Run the callback (on its context).
    case run
    /// The context's executor will never run the callback (it shut down): release what the
    /// callback captured without running it, and settle the derived promise as cancelled.
    case abandon
}

/// What a ``PromiseCore/Handler`` did.
@usableFromInline
enum HandlerOutcome {
    /// The derived promise is settled (or will be by a pipe); run these callbacks.
    case settled(ReadyCallbacks?)
    /// ``settled(_:)`` at the ``HandlerStage/arriveHandingOver`` stage, by
    /// ``ResultBox/settleHandingOver(_:)``: the drain's reference is in the list (or released),
    /// so the box must not be touched any more.
    case settledHandingOver(ReadyCallbacks?)
    /// ``settled(_:)`` at the ``HandlerStage/run`` stage, by ``ResultBox/settleInPlace(_:)``: the
    /// box's own callbacks, ready, oldest first (the first node unmanaged, with the list's
    /// reference to it), for which no reference to the box was taken. The
    /// caller holds the box while it runs them (a job: its executor holds it for the length of
    /// `run()`), or makes them a ``ReadyCallbacks`` with a reference of its own
    /// (``DerivedBox/readyCallbacks(_:)``).
    case settledInPlace(Unmanaged<PromiseCallbackNode>?)
    /// Call again with `.run` on this context.
    case dispatch(PromiseContext)
    /// The handler handed the derived promise to its context's executor as a job (see
    /// ``PromiseCallbackNode/submitAsJob(onExecutorOf:source:)``), which calls it again with `.run`.
    ///
    /// The handler must not touch the box after submitting it: the job may run, and release
    /// the box with its handler, on the executor's thread before the `.arrive` call returns.
    case submitted

    /// The callbacks to run, for an outcome of a stage that never answers
    /// ``settledInPlace(_:)`` (see ``DerivedBox/readyCallbacks(_:)`` for one that may).
    @usableFromInline
    var ready: ReadyCallbacks? {
        switch self {
        case .settled(let ready), .settledHandingOver(let ready): return ready
        case .dispatch, .submitted: return nil
        case .settledInPlace: preconditionFailure("a .settledInPlace outcome needs its box (DerivedBox.readyCallbacks)")
        }
    }
}
