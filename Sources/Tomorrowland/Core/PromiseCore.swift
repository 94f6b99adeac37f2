import Synchronization

/// The part of a promise's storage that does not depend on its types: state, callbacks, cancel
/// handlers and the observer count of automatic cancellation propagation.
///
/// Kept non-generic on purpose: code here is compiled once, fully optimised, and never pays a
/// generic-metadata lookup. ``PromiseBox`` adds the typed result.
///
/// A core is also a ``PromiseCallbackNode``: a promise derived from another one (by `map`,
/// `then`, …) is registered on its upstream as itself. That saves one allocation per promise.
///
/// - Important: `@unchecked Sendable`: every `var` is guarded by `lock` (except what the
///   subclass documents). The lock is what makes accesses exclusive, so the stored properties
///   opt out of Swift's dynamic exclusivity checks (`@exclusivity(unchecked)`), which cost more
///   than the rest of a registration.
@usableFromInline
class PromiseCore: PromiseCallbackNode, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Fields read without the lock".
    @usableFromInline
    enum Status: UInt8 {
        /// A `DelayedPromise` whose handler has not started; cancel requests are ignored.
        case delayed
        case pending
        case cancelRequested
        case resolved
    }

    // Field order and sizes are chosen so that a `map` link's box (a ``CallbackBox``) fits in
    // 120 bytes: glibc frees chunks of at most 128 bytes to its fast bins, larger ones through
    // the consolidating path, a slower free for every `map` link.
    // The lock, the status, the two flag bytes and the observer count share one 8-byte word.
    // The `var`s are `final`: code inlined into other modules (`settle`, `resolve`) then reads
    // them directly, not through the class's vtable.
    @usableFromInline
    let lock = SpinLock()
    @usableFromInline
    @exclusivity(unchecked)
    final var status: Status
    /// Whether the result is `.cancelled` (valid once resolved): lets untyped code tell.
    @usableFromInline
    @exclusivity(unchecked)
    final var isCancelledResult = false
    /// ``sealedFlag``, ``firstSlotFlag`` and ``firstSlotTakenFlag``. Written only under the lock
    /// (or before the core is published); an atomic so that ``lockFirstSlotIfFree()`` may read it
    /// first without the lock, as a hint it then checks under the lock.
    @usableFromInline
    final let flags = Atomic<UInt8>(0)
    /// Propagating observers that have not requested cancellation; -1 until the first one comes
    /// (a promise that was never observed is never cancelled by propagation, D1).
    @usableFromInline
    @exclusivity(unchecked)
    final var observerCount: Int32 = -1
    /// The registered callbacks, **newest first**: registering pushes at the head (no tail
    /// pointer to store); whoever takes the list reverses it (``PromiseCallbackNode/reversed(_:)``)
    /// to run callbacks in registration order.
    @usableFromInline
    @exclusivity(unchecked)
    final var callbackHead: PromiseCallbackNode?
    /// The cancel handlers, in registration order; `nil`, never an empty array, when there are
    /// none: destroying `nil` is a `swift_release` of null, the empty array's shared storage
    /// costs twice as much, once per box dying and once per resolution.
    @usableFromInline
    @exclusivity(unchecked)
    final var cancelHandlers: [CancelHandler]?
    /// The promise this one observes with cancel propagation, until the first cancel request
    /// passes it on or the promise resolves. Keeps neither the upstream nor its memory alive:
    /// see ``UpstreamLink`` for why it may be dereferenced under this promise's lock.
    @usableFromInline
    @exclusivity(unchecked)
    final var upstream: UpstreamLink?

    /// The work a derived promise does when its upstream resolves.
    ///
    /// Called first with `.arrive` on the thread that fires the node: it either settles the
    /// child right away (a result that passes through) or asks for the callback to run on a
    /// context. Then, if asked, with `.run` on that context, where it runs the user's closure.
    /// Both promises are passed untyped; the closure, made where the types are known, casts them.
    @usableFromInline
    typealias Handler = (_ child: PromiseCore, _ source: PromiseCore, _ stage: HandlerStage) -> HandlerOutcome

    @inlinable
    init(status: Status) {
        self.status = status
    }

    // MARK: Flags

    /// In ``flags``: the last handle (``PromiseSeal``) is gone or was handed on (D1).
    @usableFromInline
    static var sealedFlag: UInt8 { 1 }
    /// In ``flags``: the box is a ``RootBox``, with room for its first callback. Set before the
    /// box is published, never cleared.
    @usableFromInline
    static var firstSlotFlag: UInt8 { 2 }
    /// In ``flags``: the ``RootBox``'s slot holds a callback that runs before every callback of
    /// the list. Set under the lock while the box is pending, never cleared.
    @usableFromInline
    static var firstSlotTakenFlag: UInt8 { 4 }

    /// Sets `flag` in ``flags``; call with the lock held, or before the core is published.
    ///
    /// A load and a store, not an atomic read-modify-write: every writer holds the lock.
    @inlinable
    @inline(__always)
    final func setFlagLocked(_ flag: UInt8) {
        flags.store(flags.load(ordering: .relaxed) | flag, ordering: .relaxed)
    }

    /// Whether the ``RootBox`` slot holds a callback. Exact under the lock, or once the box is
    /// resolved (the slot is taken only while it is pending).
    @inlinable
    final var hasFirstSlotCallback: Bool {
        flags.load(ordering: .relaxed) & PromiseCore.firstSlotTakenFlag != 0
    }

    /// Whether this is a ``RootBox`` whose slot looked free: a hint read without the lock, which
    /// ``lockFirstSlotIfFree()`` confirms. False for every other box, and for every tap after the
    /// first.
    @inlinable
    @inline(__always)
    final var firstSlotMayBeFree: Bool {
        flags.load(ordering: .relaxed) & (PromiseCore.firstSlotFlag | PromiseCore.firstSlotTakenFlag)
            == PromiseCore.firstSlotFlag
    }

    /// Takes the lock and returns true if this is a ``RootBox`` whose slot may take a new callback
    /// now: pending, slot free, list empty (the slot runs first, so it may only take the first
    /// callback: B2). Returns false, without the lock, otherwise.
    ///
    /// The caller that got true fills the slot and calls ``finishFirstSlotLocked()``. Not
    /// inlinable: here the fields are read directly, not through their accessors.
    @usableFromInline
    final func lockFirstSlotIfFree() -> Bool {
        lock.lock()
        if status != .resolved, callbackHead == nil, firstSlotMayBeFree { return true }
        lock.unlock()
        return false
    }

    /// Marks the slot filled and drops the lock ``lockFirstSlotIfFree()`` took.
    @inlinable
    @inline(__always)
    final func finishFirstSlotLocked() {
        setFlagLocked(PromiseCore.firstSlotTakenFlag)
        lock.unlock()
    }

    /// The list of a ``RootBox`` whose slot holds a callback, as it resolves: `head` (newest first,
    /// as stored) with the box itself appended as the oldest entry, so that the reversal every
    /// resolution does puts it first (B2). The box is then the node that runs its slot's callback
    /// (CoreInvariants: "The meanings of next": a root box's `next`). The list's reference to the
    /// box is a new one.
    ///
    /// Out of line: only root boxes with a slot callback pay for it, every other resolution pays
    /// one load and a branch in ``markResolvedLocked(cancelled:)``.
    @usableFromInline
    @inline(never)
    final func appendingSelfAsOldest(to head: PromiseCallbackNode?) -> PromiseCallbackNode {
        // The resolving thread holds the lock (first resolution wins): it owns `next` and the list.
        assert(next == nil, "a root box's slot runs once")
        guard let head else { return self }
        // Walked unretained: the list, owned by this thread, keeps every node alive.
        var last = Unmanaged.passUnretained(head)
        while let following = last._withUnsafeGuaranteedRef({ $0.next.map { Unmanaged.passUnretained($0) } }) {
            last = following
        }
        last._withUnsafeGuaranteedRef { $0.next = self }
        return head
    }

    // MARK: Resolution (called by the typed subclass, under the lock)

    /// What a resolution takes out of the core: the callbacks to run, the cancel handlers to
    /// release once the lock is dropped (they may hold resolvers of this very promise), and the
    /// link to the upstream, which may be followed only while the lock is still held
    /// (``UpstreamLink/retainLocked()``).
    @usableFromInline
    struct Taken {
        /// Newest first, as stored.
        @usableFromInline let head: PromiseCallbackNode?
        let handlers: [CancelHandler]?
        let upstream: UpstreamLink?

        init(head: PromiseCallbackNode?, handlers: [CancelHandler]?, upstream: UpstreamLink?) {
            self.head = head
            self.handlers = handlers
            self.upstream = upstream
        }
    }

    /// Marks the core resolved and takes its lists. Call with the lock held, after storing the
    /// result.
    @usableFromInline
    final func markResolvedLocked(cancelled: Bool) -> Taken {
        let taken = markResolvedWithoutSlotLocked(cancelled: cancelled)
        // A root box whose slot holds a callback is its own oldest node (``RootBox``).
        guard hasFirstSlotCallback else { return taken }
        return Taken(head: appendingSelfAsOldest(to: taken.head), handlers: taken.handlers, upstream: taken.upstream)
    }

    /// ``markResolvedLocked(cancelled:)`` for a box that has no slot: a derived promise's (only
    /// root boxes have one, ``RootBox``). Kept free of the slot's check so that the optimiser
    /// inlines it into the settling code of other modules, as it does not inline the general one.
    @usableFromInline
    final func markResolvedWithoutSlotLocked(cancelled: Bool) -> Taken {
        status = .resolved
        isCancelledResult = cancelled
        // Moved out, not copied: copying the array would retain its storage.
        let taken = Taken(head: callbackHead.take(), handlers: cancelHandlers.take(), upstream: upstream)
        upstream = nil
        return taken
    }

    /// Whether the core is resolved; call with the lock held.
    ///
    /// For code inlined into other modules (``ResultBox/storeIfPending(_:)``): there ``status`` is
    /// read through its getter, a call, where the optimiser inlines this method with the field
    /// read directly.
    @usableFromInline
    final func isResolvedLocked() -> Bool {
        status == .resolved
    }

    /// ``markResolvedWithoutSlotLocked(cancelled:)`` that leaves the cancel handlers in place:
    /// returns the callbacks (newest first, as stored) and whether there are handlers, which the
    /// caller then takes out (``takeCancelHandlersLocked()``) and releases once it dropped the
    /// lock (``ResultBox/storeIfPending(_:)``). For a box without a slot (only a ``RootBox`` has one).
    ///
    /// Not inlinable, as ``markResolvedWithoutSlotLocked(cancelled:)``: inlined into another
    /// module, the fields are reached through their accessors; the optimiser inlines it there
    /// itself, with the fields read directly.
    @usableFromInline
    final func markResolvedLeavingHandlersLocked(cancelled: Bool) -> (head: PromiseCallbackNode?, hasHandlers: Bool) {
        status = .resolved
        isCancelledResult = cancelled
        // A resolved promise follows no link: CoreInvariants: "The link rule", second point.
        upstream = nil
        return (callbackHead.take(), cancelHandlers != nil)
    }

    /// Takes the cancel handlers out; call with the lock held, and release them once it is
    /// dropped (they may hold resolvers of this very promise).
    @usableFromInline
    final func takeCancelHandlersLocked() -> [CancelHandler]? {
        cancelHandlers.take()
    }

    /// Moves a delayed core to pending. Returns false if it was not delayed.
    final func leaveDelayedState() -> Bool {
        lock.withLock {
            guard status == .delayed else { return false }
            status = .pending
            return true
        }
    }

    /// Whether the core is resolved (with any result).
    @usableFromInline
    final var isResolved: Bool {
        lock.withLock { status == .resolved }
    }

    // MARK: Callbacks

    /// Registers `node` and, if the promise is already resolved, fires it synchronously and runs
    /// what that makes ready.
    ///
    /// `node` is `consuming` here and below: the list takes over the caller's reference (usually
    /// a node made for this call) instead of retaining it once more.
    @usableFromInline
    final func register(_ node: consuming PromiseCallbackNode) {
        CallbackDrain.run(registerReturningReady(node))
    }

    /// Registers `node`; if the promise is already resolved, fires it synchronously and returns
    /// the callbacks that made ready instead of running them (for callers inside a drain).
    @usableFromInline
    final func registerReturningReady(_ node: consuming PromiseCallbackNode) -> ReadyCallbacks? {
        lock.lock()
        if status != .resolved {
            // The caller's reference goes to the list, carried unmanaged: ``pushLocked(_:)`` on the
            // node itself would retain it for the list and release the caller's.
            pushLocked(handingOver: Unmanaged.passRetained(consume node))
            lock.unlock()
            return nil
        }
        lock.unlock()
        return node.fire(source: self, isSynchronous: true)
    }

    /// Pushes `node`, which is in no list, at the head of the callback list; call with the lock
    /// held.
    ///
    /// Both fields written are known to be `nil` when written (`node.next` because the node is in
    /// no list, `callbackHead` once its list moved to the node), so they are initialised in place:
    /// an assignment (or a swap and a drop) releases their old value all the same, two calls of
    /// `swift_release` with `nil` per registration.
    @usableFromInline
    @inline(__always)
    final func pushLocked(_ node: PromiseCallbackNode) {
        assert(node.next == nil, "a node is in one list at most (CoreInvariants: \"The meanings of next\")")
        withUnsafeMutablePointer(to: &node.next) { $0.initialize(to: callbackHead.take()) }
        withUnsafeMutablePointer(to: &callbackHead) { $0.initialize(to: node) }
    }

    /// ``pushLocked(_:)`` with the caller's reference to `node`, which the list takes over (no
    /// retain for the list, no release of the caller's).
    @inline(__always)
    final func pushLocked(handingOver node: Unmanaged<PromiseCallbackNode>) {
        node._withUnsafeGuaranteedRef { node in
            assert(node.next == nil, "a node is in one list at most (CoreInvariants: \"The meanings of next\")")
            withUnsafeMutablePointer(to: &node.next) { $0.initialize(to: callbackHead.take()) }
        }
        withUnsafeMutablePointer(to: &callbackHead) { $0.initialize(to: node.takeRetainedValue()) }
    }

    // MARK: Cancellation

    /// Whether a cancel was requested or the promise was cancelled.
    @usableFromInline
    final var hasRequestedCancel: Bool {
        lock.withLock {
            switch status {
            case .cancelRequested: return true
            case .resolved: return isCancelledResult
            case .pending, .delayed: return false
            }
        }
    }

    /// Moves a pending promise to cancel-requested and runs the cancel handlers registered so far.
    @usableFromInline
    final func requestCancel() {
        let taken: (handlers: [CancelHandler]?, upstream: PromiseCore?)? = lock.withLock {
            guard status == .pending else { return nil }
            status = .cancelRequested
            let handlers = cancelHandlers.take()
            // Followed under the lock, while the link still guarantees the upstream's memory.
            let upstream = upstream.take()?.retainLocked()
            return (handlers, upstream)
        }
        guard let taken else { return }
        taken.upstream?.removeObserver()
        for handler in taken.handlers ?? [] {
            handler.invoke(on: self, isSynchronous: false)
        }
    }

    /// Adds a handler for cancel requests. Runs it at once (synchronous trigger) if a cancel was
    /// already requested or the promise was cancelled; drops it if the promise has a value or an
    /// error.
    @usableFromInline
    final func addCancelHandler(_ handler: CancelHandler) {
        let runNow: Bool = lock.withLock {
            switch status {
            case .pending, .delayed:
                // Moved out and back: appended in place, allocating as an array always did.
                var handlers = cancelHandlers.take() ?? []
                handlers.append(handler)
                cancelHandlers = handlers
                return false
            case .cancelRequested:
                return true
            case .resolved:
                return isCancelledResult
            }
        }
        if runNow {
            handler.invoke(on: self, isSynchronous: true)
        }
    }

    /// Whether a context-dispatched cancel handler should still run: not once the promise has a
    /// value or an error.
    final var acceptsCancelHandlers: Bool {
        lock.withLock { status != .resolved || isCancelledResult }
    }

    // MARK: Observer counting (automatic cancellation propagation, D1)

    /// Makes this promise a propagating observer of `upstream`: `upstream` counts one more
    /// observer, and the first cancel request on this promise takes it away again.
    ///
    /// - Parameter replacingResolvedUpstream: True when this promise's current upstream (if any)
    ///   is known to be resolved, as in a `flatMap` callback adopting the promise it returned.
    ///   Passing a cancel request to a resolved promise has no effect, so `upstream` then takes
    ///   its place in the one inline link, instead of a second link (a cancel handler, three
    ///   allocations).
    @usableFromInline
    final func propagateCancel(to upstream: PromiseCore, replacingResolvedUpstream: Bool = false) {
        upstream.addObserver()
        let linkedInline: Bool = lock.withLock {
            guard self.upstream == nil || replacingResolvedUpstream else { return false }
            // A cancel request passes the inline link on before it runs the handlers, so the link
            // may only go inline while no handler is registered: a handler registered earlier
            // (say an `onRequestCancel` before `resolve(with:)`) must run first, as in
            // Tomorrowland, where every link is an entry in the same list.
            guard cancelHandlers == nil else { return false }
            switch status {
            case .pending, .delayed:
                // The caller registers this promise (or a pipe into it) on `upstream` next: the
                // link rule's first point. A replaced link needs no release.
                self.upstream = UpstreamLink(upstream)
                return true
            case .cancelRequested, .resolved:
                return false
            }
        }
        if !linkedInline {
            // A second upstream that must not replace the first (`resolve(with:)` on a promise
            // that observes one already), a handler registered before this link, or a cancel
            // request that already happened (a `flatMap` result cancelled before its callback
            // ran): the general mechanism handles all three.
            let link = UpstreamReferenceBox(upstream)
            addCancelHandler(.inline { link.reference.load()?.removeObserver() })
        }
    }

    /// Registers `child`, a derived promise made just now, as a callback of this promise and as
    /// a propagating observer of it: ``propagateCancel(to:)`` and ``register(_:)`` in one go.
    ///
    /// One lock round trip on this promise instead of two, and none on `child`: nothing else can
    /// see `child` before this call publishes it (through this promise's lock, whose release
    /// orders the write of `child.upstream` before any thread that takes the callback list).
    ///
    /// - Important: `child` must be new (pending, no upstream, in no list).
    @inlinable
    final func registerNewChild(_ child: PromiseCore) {
        assert(
            child.upstream == nil && child.next == nil && child.status == .pending,
            "registerNewChild(_:) takes a new child: pending, unlinked, in no list")
        // CoreInvariants: "The link rule", first point: linked while it is put in this list.
        child.upstream = UpstreamLink(self)
        let isResolved: Bool = lock.withLock {
            countObserverLocked()
            if status == .resolved { return true }
            pushLocked(child)
            return false
        }
        guard isResolved else { return }
        CallbackDrain.run(child.fire(source: self, isSynchronous: true))
    }

    /// Drops the link to the upstream, if any: for a promise that stays pending after its
    /// upstream fired it without holding the upstream until it resolves (`delay`), as the link
    /// rule requires. A cancel request would find the upstream resolved anyway.
    @usableFromInline
    final func unlinkUpstream() {
        lock.withLock { upstream = nil }
    }

    /// The upstream at `upstream` is being destroyed unresolved and is about to run its callbacks
    /// with a stand-in: drops the link to it (the link rule's third point).
    override final func unlinkFromDyingUpstream(_ upstream: UnsafeMutableRawPointer) {
        lock.withLock {
            if let link = self.upstream, link.links(to: upstream) { self.upstream = nil }
        }
    }

    /// Counts one more propagating observer.
    @usableFromInline
    final func addObserver() {
        lock.withLock { countObserverLocked() }
    }

    /// Counts one more propagating observer; call with the lock held.
    @inlinable
    @inline(__always)
    final func countObserverLocked() {
        observerCount = observerCount < 0 ? 1 : observerCount + 1
    }

    /// One propagating observer requested cancellation; requests cancellation of this promise
    /// when that was the last one and no handle is left.
    @usableFromInline
    final func removeObserver() {
        let cancel: Bool = lock.withLock {
            observerCount -= 1
            return observerCount == 0 && flags.load(ordering: .relaxed) & PromiseCore.sealedFlag != 0
        }
        if cancel { requestCancel() }
    }

    /// The last handle is gone; requests cancellation when every observer already asked for it.
    @usableFromInline
    final func seal() {
        let cancel: Bool = lock.withLock {
            setFlagLocked(PromiseCore.sealedFlag)
            return observerCount == 0
        }
        if cancel { requestCancel() }
    }
}

/// Something that wants to hear about cancel requests on a promise.
@usableFromInline
enum CancelHandler: Sendable {
    /// Library bookkeeping (propagation to an upstream); runs inline, whatever the state.
    case inline(@Sendable () -> Void)
    /// A user's `onRequestCancel` handler on its context; receives the promise's core.
    case user(PromiseContext, UserCancelHandler)

    func invoke(on core: PromiseCore, isSynchronous: Bool) {
        switch self {
        case .inline(let body):
            body()
        case .user(let context, let handler):
            if case .immediate = context {
                // Called directly: it inherits the requesting thread's `isExecutingNow`.
                handler.take()?(core)
                return
            }
            context.execute(isSynchronous: isSynchronous) {
                // A value or error that arrived meanwhile wins over the cancel request.
                guard let body = handler.take() else { return }
                if core.acceptsCancelHandlers { body(core) }
            }
        }
    }
}

/// A user's cancel handler, handed over exactly once: the block that runs it takes it out, so
/// that the closure is released on the handler's context (B7), not wherever the list of handlers
/// happens to be dropped.
@usableFromInline
final class UserCancelHandler: @unchecked Sendable {
    // `@unchecked Sendable`: `body` is taken at most once, by the single invocation of the
    // handler (cancel handlers are taken from the list under the promise's lock, once).
    private var body: (@Sendable (PromiseCore) -> Void)?

    @usableFromInline
    init(_ body: @escaping @Sendable (PromiseCore) -> Void) {
        // B10: a cancel handler runs with the context current where it was registered.
        if _slowPath(CallbackContextPropagation.isOn) {
            self.body = CallbackContextPropagation.captureCurrent().wrapping(body)
        } else {
            self.body = body
        }
    }

    func take() -> (@Sendable (PromiseCore) -> Void)? {
        defer { body = nil }
        return body
    }
}

extension PromiseCore: PromiseCancelRequestable {}
