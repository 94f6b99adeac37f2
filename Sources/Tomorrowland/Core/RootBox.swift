/// The box of a root promise (`makeWithResolver`, `Promise(on:_:)`, `DelayedPromise`): a
/// ``ResultBox`` with room for its first callback, so that a root promise with one `tap` is one
/// object and its handle, not three objects.
///
/// ## The slot
/// A `tap` without a token registered while the box is pending and its list is empty goes into
/// ``firstCallback`` and ``firstContext`` instead of a ``TapNode``
/// (``PromiseCore/lockFirstSlotIfFree()``). Every later callback goes to the list, so the slot's
/// callback is always the oldest one (B2).
///
/// When the box resolves, it puts itself at the head of the list it hands to the drain
/// (``PromiseCore/appendingSelfAsOldest(to:)``): the box is then the node that runs the slot's
/// callback, and, on an executor, the job (submitted without a source: it reads its own
/// result). CoreInvariants: "The meanings of next" (a root box's `next`).
///
/// A box that dies unresolved cannot be that node (`self` must not escape a deinit): its deinit
/// moves the slot into a resolved stand-in box, which runs it with `.cancelled` before the list
/// (A3).
///
/// - Important: `@unchecked Sendable`: the slot is written under the lock while the box is
///   pending, read by the one thread that fires the box (after the resolution took the lock),
///   then by the one job it was handed to: CoreInvariants: "Sendable by hand-off".
///
/// Not `final` only so that ``TrackedResultBox`` can add its deinit; its members are final.
@usableFromInline
class RootBox<Result: StoredPromiseResult>: ResultBox<Result>, @unchecked Sendable {
    // @unchecked Sendable: see the type's discussion; CoreInvariants: "Fields read without the lock".
    /// Where the slot's callback runs; `.immediate` while the slot is empty.
    @usableFromInline
    @exclusivity(unchecked)
    final var firstContext: PromiseContext
    /// The slot's callback; taken by whoever runs it, so that it is released on its context (B7).
    @usableFromInline
    @exclusivity(unchecked)
    final var firstCallback: (@Sendable (Result) -> Void)?

    /// A pending box with an empty slot.
    @inlinable
    override init() {
        firstContext = .immediate
        firstCallback = nil
        super.init()
        // Before the box is published: no lock needed.
        setFlagLocked(PromiseCore.firstSlotFlag)
    }

    /// A box in the delayed state with an empty slot.
    override init(delayed: Void) {
        firstContext = .immediate
        firstCallback = nil
        super.init(delayed: ())
        setFlagLocked(PromiseCore.firstSlotFlag)
    }

    /// The resolved stand-in of a box that dies unresolved with a callback in its slot: cancelled,
    /// with that callback moved into its own slot.
    init(cancelledTakingSlot context: PromiseContext, _ callback: (@Sendable (Result) -> Void)?) {
        firstContext = context
        firstCallback = callback
        super.init(result: .cancelledResult)
        setFlagLocked(PromiseCore.firstSlotFlag | PromiseCore.firstSlotTakenFlag)
    }

    deinit {
        // A3: a box that dies unresolved with a callback in its slot. (The list alone is
        // ``ResultBox``'s deinit's.) Nothing else can reach the box now: no lock needed.
        guard hasFirstSlotCallback, status != .resolved else { return }
        runFirstSlotCancelled()
    }

    /// The slot and the list of a box that dies unresolved, run with `.cancelled` from a stand-in
    /// that is their node (see the type's discussion). Out of line, as the rare path.
    @inline(never)
    private final func runFirstSlotCancelled() {
        let standIn = RootBox(cancelledTakingSlot: firstContext, firstCallback)
        firstCallback = nil
        // Moved to the stand-in, so ``ResultBox``'s deinit finds nothing left to run.
        standIn.next = takeListOfDyingBox()
        CallbackDrain.run(ReadyCallbacks(source: standIn, head: standIn))
    }

    /// Runs the slot's callback with this box's result, here and now, releasing it here (B7).
    @inline(__always)
    private final func runFirstCallback() {
        // `!` and an assignment, not `Optional.take()` or `swap`: generic code handles a closure
        // at the most general abstraction, and converting it allocates a reabstraction thunk.
        let body = firstCallback!
        firstCallback = nil
        // CoreInvariants: "Fields read without the lock": the box is resolved.
        body(storedResult)
    }

    /// Moves the slot's context out (the slot fires once): no retain and release of its executor.
    @inline(__always)
    private final func takeFirstContext() -> PromiseContext {
        var context = PromiseContext.immediate
        swap(&context, &firstContext)
        return context
    }

    // MARK: The box as the node of its slot (only ever at the head of its own resolved list)

    override final func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        assert(source === self, "a root box's slot reads its own result")
        fire(on: takeFirstContext(), isSynchronous: isSynchronous)
        return nil
    }

    /// Runs the slot's callback on `context`, or submits this box to its executor as the job.
    private final func fire(on context: PromiseContext, isSynchronous: Bool) {
        switch context.route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            runInline(isExecutingNow: flag) { runFirstCallback() }
        case .executor(let executor):
            // No source: the job is this box, which holds its result.
            submitAsJob(to: executor)
        }
    }

    /// ``fire(source:isSynchronous:)`` from a drain, which hands its reference over: kept by the
    /// job on an executor context, released here otherwise.
    override final func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        assert(source === self, "a root box's slot reads its own result")
        let context = takeFirstContext()
        // The common case: the job takes the drain's reference.
        switch consume context {
        case .executor(let executor):
            // CoreInvariants: "Ownership in the drain".
            executor.submit(job: Unmanaged.passUnretained(self).takeRetainedValue())
            return nil
        case let other:
            fire(on: other, isSynchronous: false)
        }
        // The drain's reference, released as this call ends.
        // CoreInvariants: "Ownership in the drain".
        _ = Unmanaged.passUnretained(self).takeRetainedValue()
        return nil
    }

    /// The loop the slot's callback is bound for, when its context is an executor: firing the box
    /// there only submits it (see ``PromiseJobBatch``).
    override final var batchExecutorIdentity: ObjectIdentifier? { firstContext.batchingExecutorIdentity }

    override final var batchExecutor: (any PromiseExecutor)? { firstContext.batchingExecutor }

    override final func run(source: PromiseCore) {
        runFirstCallback()
    }

    override final func runWithoutSource() {
        runFirstCallback()
    }

    /// The executor will never run the slot's callback: release it unrun.
    override final func abandonWithoutRunning(source: PromiseCore?) {
        firstCallback = nil
    }
}
