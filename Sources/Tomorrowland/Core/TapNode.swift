/// The callback node of `tap(on:token:_:)`: the user's closure, its context and, while it waits
/// on an executor, a copy of the result, in one allocation (96 bytes of heap).
///
/// ``ObserverNode`` holds a closure that wraps the user's; this node stores the user's closure
/// itself, and a thin `invoke` function made where `Value` and `Error` are known, so that every
/// access to the result is specialised code even though this class's own methods are generic.
///
/// A token's guard is not a field: `invoke` captures it when there is one (one more allocation,
/// for taps with a token only).
///
/// ## The result slot
/// A node handed to an executor as a job copies the result into ``resultSlot`` when it fits in
/// 16 bytes (`Int`, a class reference, an `Error`, most small structs), so the job does not keep
/// the resolved promise alive: a burst of resolved promises whose taps wait on a loop holds only
/// the nodes, not the promises too (W3 in `Benchmarks/`). Larger results are read from the
/// promise, which the job then holds in ``PromiseCallbackNode/next`` as other nodes do.
///
/// The slot holds an `Optional<PromiseResult<Value, Error>>`: `.none` from `init` until the node
/// is handed to an executor, the result until the job runs and moves it out. The node's
/// `deinit` destroys what is left only when the job never ran (``onComplete`` is still set): a
/// job dropped by an executor that shut down.
@usableFromInline
final class TapNode<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    /// What `invoke` is asked to do.
    @usableFromInline
    enum Step {
        /// Run the closure now with the result of this resolved promise.
        case run(PromiseCore)
        /// Copy the result of this resolved promise into the slot; returns false when it does
        /// not fit, and the job must then hold the promise.
        case capture(PromiseCore)
        /// Run the closure with the result in the slot, moving it out.
        case runCaptured
        /// Destroy what the slot holds (`.none` or a result whose job never ran).
        case discardCaptured
    }

    @usableFromInline
    typealias Invoke = (_ node: TapNode<Value, Error>, _ step: Step) -> Bool

    /// The stored form of the result; see the type's discussion.
    @usableFromInline
    typealias Captured = PromiseResult<Value, Error>?

    @usableFromInline
    let context: PromiseContext
    /// Taken by whoever runs it, so that it is released on its context (B7).
    @usableFromInline
    @exclusivity(unchecked)
    var onComplete: (@Sendable (PromiseResult<Value, Error>) -> Void)?
    @usableFromInline
    let invoke: Invoke
    /// Raw storage for a ``Captured`` value; only `invoke`, which knows the type, touches it.
    @usableFromInline
    @exclusivity(unchecked)
    var resultSlot: (UInt64, UInt64) = (0, 0)

    @inlinable
    init(
        context: PromiseContext, tokenGuard: TokenGuard?,
        onComplete: @escaping @Sendable (PromiseResult<Value, Error>) -> Void
    ) {
        self.context = context
        self.onComplete = onComplete
        if let tokenGuard {
            invoke = { node, step in
                TapNode.perform(step, on: node) { onComplete, result in
                    if tokenGuard.isValid { onComplete(result) }
                }
            }
        } else {
            // Captures nothing: a thin function, no allocation.
            invoke = { node, step in
                TapNode.perform(step, on: node) { onComplete, result in onComplete(result) }
            }
        }
        super.init()
        if TapNode.fitsSlot {
            // CoreInvariants: "The raw callback storage and the 120-byte budget" (the result slot).
            withUnsafeMutableBytes(of: &resultSlot) { _ = $0.initializeMemory(as: Captured.self, repeating: nil) }
        }
    }

    deinit {
        // Only a job that never ran still has its closure (see the type's discussion).
        if onComplete != nil { _ = invoke(self, .discardCaptured) }
    }

    /// Whether a ``Captured`` value fits ``resultSlot`` (a constant in specialised code).
    @inlinable
    static var fitsSlot: Bool {
        MemoryLayout<Captured>.size <= MemoryLayout<(UInt64, UInt64)>.size
            && MemoryLayout<Captured>.alignment <= MemoryLayout<(UInt64, UInt64)>.alignment
    }

    /// The body of `invoke`: specialised where the node is made. `call` runs the user's closure,
    /// which it receives taken out of the node so that it is released here, on the context.
    @inlinable
    @inline(__always)
    static func perform(
        _ step: Step, on node: TapNode,
        call: (@Sendable (PromiseResult<Value, Error>) -> Void, PromiseResult<Value, Error>) -> Void
    ) -> Bool {
        switch step {
        case .run(let source):
            call(node.takeOnComplete(), PromiseBox<Value, Error>.resolvedResult(of: source))
            return true
        case .capture(let source):
            guard fitsSlot else { return false }
            let result = PromiseBox<Value, Error>.resolvedResult(of: source)
            // CoreInvariants: "The raw callback storage and the 120-byte budget" (the result slot).
            withUnsafeMutableBytes(of: &node.resultSlot) {
                $0.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Captured.self).pointee = result
            }
            return true
        case .runCaptured:
            // CoreInvariants: "The raw callback storage and the 120-byte budget" (the result slot).
            let result = withUnsafeMutableBytes(of: &node.resultSlot) {
                $0.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Captured.self).move()
            }
            // `unsafelyUnwrapped`: a job that runs captured was captured (`.capture` stored the result).
            call(node.takeOnComplete(), result.unsafelyUnwrapped)
            return true
        case .discardCaptured:
            if fitsSlot {
                // CoreInvariants: "The raw callback storage and the 120-byte budget" (the result slot).
                withUnsafeMutableBytes(of: &node.resultSlot) {
                    _ = $0.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Captured.self).move()
                }
            }
            return true
        }
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
        switch context {
        case .executor(let executor):
            submitAsJob(to: executor, capturing: source)
            return nil
        default:
            break
        }
        switch context.route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            runInline(isExecutingNow: flag) { _ = invoke(self, .run(source)) }
        case .executor(let executor):
            submitAsJob(to: executor, capturing: source)
        }
        return nil
    }

    /// ``fire(source:isSynchronous:)`` from a drain, which hands its reference over: kept by the
    /// job on an executor context, released here otherwise.
    @usableFromInline
    override func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        // The common case: the job takes the drain's reference.
        switch context {
        case .executor(let executor):
            if invoke(self, .capture(source)) {
                // CoreInvariants: "Ownership in the drain".
                executor.submit(job: Unmanaged.passUnretained(self).takeRetainedValue())
            } else {
                submitAsJobHandingOver(to: executor, source: source)
            }
            return nil
        default:
            break
        }
        switch context.route(isSynchronous: false) {
        case .inline(let flag):
            runInline(isExecutingNow: flag) { _ = invoke(self, .run(source)) }
        case .executor(let executor):
            submitAsJob(to: executor, capturing: source)
        }
        // The drain's reference, released as this call ends.
        // CoreInvariants: "Ownership in the drain".
        _ = Unmanaged.passUnretained(self).takeRetainedValue()
        return nil
    }

    /// Hands this node to `executor` as a job, with the result in the slot if it fits, else
    /// holding `source`.
    @inline(__always)
    private func submitAsJob(to executor: any PromiseExecutor, capturing source: PromiseCore) {
        if invoke(self, .capture(source)) {
            submitAsJob(to: executor)
        } else {
            submitAsJob(to: executor, source: source)
        }
    }

    /// The loop this tap is bound for, when its context is an executor: firing it there only
    /// submits it (see ``PromiseJobBatch``).
    override var batchExecutorIdentity: ObjectIdentifier? { context.batchingExecutorIdentity }

    override var batchExecutor: (any PromiseExecutor)? { context.batchingExecutor }

    override func run(source: PromiseCore) {
        _ = invoke(self, .run(source))
    }

    /// The executor will never run the callback: release it, and the result copied for it, unrun.
    override func abandonWithoutRunning(source: PromiseCore?) {
        guard onComplete != nil else { return }
        _ = invoke(self, .discardCaptured)
        onComplete = nil
    }

    override func runWithoutSource() {
        _ = invoke(self, .runCaptured)
    }
}
