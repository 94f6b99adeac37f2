/// One entry in a promise's callback list: a derived promise waiting for its upstream, a pipe
/// into another promise, or a plain observer.
///
/// Nodes are linked through ``next`` so that registering a callback allocates nothing beyond
/// the node, and so that a resolved list can be walked without recursion (see
/// ``CallbackDrain``).
///
/// - Important: `@unchecked Sendable` because a node moves between threads by hand-off only: it
///   belongs to exactly one callback list (guarded by that promise's lock) until the list is
///   taken at resolution; after that it belongs to the draining thread, or to the one executor
///   job it was handed to.
@usableFromInline
class PromiseCallbackNode: PromiseJob, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    /// The next node of the list this node is in.
    ///
    /// A node handed to an executor as a job is in no list any more; the field then holds the
    /// resolved promise the job reads its result from (see ``submitAsJob(to:source:)``), which
    /// saves every node a field of its own.
    @usableFromInline
    @exclusivity(unchecked)
    final var next: PromiseCallbackNode?

    @inlinable
    init() {}

    deinit {
        // Written out, so that the compiler does not destroy `next` with the loop it generates
        // for a class linked to its own type: that loop starts with a `swift_retain` and a
        // `swift_release` even of `nil`, paid by every node, and `next` is `nil` when
        // almost every node dies (a list's nodes are taken out one by one, a job's source is taken
        // by `run()` or `abandon()`). A chain that does die here is still released iteratively,
        // node by node while this reference is the last one, never by recursion.
        guard var link = next.take() else { return }
        while isKnownUniquelyReferenced(&link), let following = link.next.take() {
            link = following
        }
    }

    /// Reacts to the resolution of `source`, the promise this node was registered on.
    ///
    /// - Parameters:
    ///   - source: The resolved promise box (its concrete type is known to the subclass).
    ///   - isSynchronous: True when the node fires during its own registration because the
    ///     promise was already resolved (the trigger `.nowOr` contexts care about).
    /// - Returns: Callbacks of another promise that this call resolved inline and that are now
    ///   ready to run. The caller runs them (it must not recurse), or `nil`.
    @usableFromInline
    func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        preconditionFailure("PromiseCallbackNode.fire must be overridden")
    }

    /// ``fire(source:isSynchronous:)`` from a ``CallbackDrain`` (not synchronous), which hands
    /// over its reference to this node: the call releases it, or gives it to the executor the
    /// node is submitted to (one retain and one release fewer per hop).
    ///
    /// - Important: The caller must hold that reference unmanaged (it neither uses nor releases
    ///   the node after this call).
    @usableFromInline
    func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        // The drain's reference, owned here: released as this call ends.
        // CoreInvariants: "Ownership in the drain".
        let owned = Unmanaged.passUnretained(self).takeRetainedValue()
        return owned.fire(source: source, isSynchronous: false)
    }

    /// The promise at `upstream`, whose list this node is in, is being destroyed unresolved:
    /// drop every link to it this node's promise holds (see ``UpstreamLink``). Does nothing by
    /// default; a derived promise and a pipe into a promise override it.
    func unlinkFromDyingUpstream(_ upstream: UnsafeMutableRawPointer) {}

    /// The identity of the serial-executor candidate this node would be submitted to when it
    /// fires from a drain, if firing it there does nothing but submit it (no user code, no
    /// settling): such nodes may go to the executor together, as one ``PromiseJobBatch``.
    ///
    /// `nil` (the default) for every node that may do more when it fires. A node that answers
    /// must also answer ``batchExecutor``, return nil from ``fire(source:isSynchronous:)`` on that
    /// executor, and implement ``run(source:)`` and ``abandonWithoutRunning(source:)``.
    @usableFromInline
    var batchExecutorIdentity: ObjectIdentifier? { nil }

    /// The executor behind ``batchExecutorIdentity``.
    @usableFromInline
    var batchExecutor: (any PromiseExecutor)? { nil }

    /// Reverses a list linked through ``next`` and returns its new head: a promise stores its
    /// callbacks newest first, and they run oldest first.
    @inlinable
    static func reversed(_ head: PromiseCallbackNode) -> PromiseCallbackNode {
        // The common case, one callback, costs one load and one compare.
        guard var rest = head.next else { return head }
        var reversed = head
        reversed.next = nil
        while true {
            let following = rest.next
            rest.next = reversed
            reversed = rest
            guard let next = following else { return reversed }
            rest = next
        }
    }

    /// Hands this node to `executor` as a job that will run ``run(source:)`` with `source`.
    final func submitAsJob(to executor: any PromiseExecutor, source: PromiseCore) {
        assert(next == nil, "a node is submitted only once it left its list")
        // CoreInvariants: "The meanings of next": `next` is `nil` (asserted above), which holds
        // nothing to release, so it is initialised in place; an assignment would release the old
        // value all the same, a call of `swift_release` with `nil`.
        withUnsafeMutablePointer(to: &next) { $0.initialize(to: source) }
        executor.submit(job: self)
    }

    /// Hands this node to `executor` as a job that will run ``run(source:)`` with `source`, with
    /// the caller's reference to the node (which the caller must no longer release).
    @inline(__always)
    final func submitAsJobHandingOver(to executor: any PromiseExecutor, source: PromiseCore) {
        assert(next == nil, "a node is submitted only once it left its list")
        // In place, as in `submitAsJob(to:source:)`.
        withUnsafeMutablePointer(to: &next) { $0.initialize(to: source) }
        // CoreInvariants: "Ownership in the drain".
        executor.submit(job: Unmanaged.passUnretained(self).takeRetainedValue())
    }

    /// Hands this node to `executor` as a job that needs no promise: it will run
    /// ``runWithoutSource()`` (a node that keeps its own copy of the result, ``TapNode``).
    final func submitAsJob(to executor: any PromiseExecutor) {
        assert(next == nil, "a node is submitted only once it left its list")
        executor.submit(job: self)
    }

    /// Hands this node to the executor of `context` as a job, if it is an `.executor` context,
    /// and says whether it did.
    ///
    /// The common case of every callback on a loop. `context` is borrowed (it is stored in the
    /// node), so the executor is neither retained nor released around the call. Keep the
    /// `switch`: an `if case`/`guard case` binding copies the whole context first.
    @usableFromInline
    @inline(__always)
    final func submitAsJob(onExecutorOf context: borrowing PromiseContext, source: PromiseCore) -> Bool {
        switch context {
        case .executor(let executor):
            submitAsJob(to: executor, source: source)
            return true
        default:
            return false
        }
    }

    /// ``submitAsJob(onExecutorOf:source:)`` with the caller's reference to the node, which the
    /// job takes instead of a new one (``HandlerStage/arriveHandingOver``).
    @usableFromInline
    @inline(__always)
    final func submitAsJobHandingOver(onExecutorOf context: borrowing PromiseContext, source: PromiseCore) -> Bool {
        switch context {
        case .executor(let executor):
            submitAsJobHandingOver(to: executor, source: source)
            return true
        default:
            return false
        }
    }

    /// The submitting part of a derived promise's `.arrive` and `.arriveHandingOver` stages: hands
    /// this node to the executor of `context` as a job (with the drain's reference for
    /// `.arriveHandingOver`) and answers `.submitted`, or answers `.dispatch(context)` for a
    /// context without an executor. The node must not be touched after `.submitted` (see
    /// ``HandlerOutcome/submitted``).
    ///
    /// `@inlinable`, not just `@usableFromInline`: the families are specialised in the caller's
    /// module, and a call here (returning the outcome indirectly) would be paid by every `map`
    /// link.
    @inlinable
    @inline(__always)
    final func submitOrDispatch(
        onExecutorOf context: borrowing PromiseContext, source: PromiseCore, stage: HandlerStage
    ) -> HandlerOutcome {
        if case .arriveHandingOver = stage {
            if submitAsJobHandingOver(onExecutorOf: context, source: source) { return .submitted }
        } else if submitAsJob(onExecutorOf: context, source: source) {
            return .submitted
        }
        return .dispatch(copy context)
    }

    /// Runs the job ``submitAsJob(to:source:)`` handed to an executor.
    @usableFromInline
    final func run() {
        guard next != nil else {
            ExecutionFlags.with(isExecutingNow: false) { runWithoutSource() }
            return
        }
        // `take()`: moves the reference out, no retain/release pair. (Binding it with `if let`
        // instead costs a retain and a release per job.)
        // CoreInvariants: "The meanings of next": a job's `next` is its source (`nil` checked above).
        let source = unsafeDowncast(next.take().unsafelyUnwrapped, to: PromiseCore.self)
        ExecutionFlags.with(isExecutingNow: false) { run(source: source) }
    }

    /// Settles the job ``submitAsJob(to:source:)`` or ``submitAsJob(to:)`` handed to an executor
    /// that will never run it: the callback is released unrun, and what it would have resolved is
    /// cancelled (see ``PromiseJob/abandon()``).
    @usableFromInline
    final func abandon() {
        // `next` holds the source for a node that reads its result from the promise, nothing for
        // a node with its own copy (see `run()`).
        // CoreInvariants: "The meanings of next".
        let source = next.take().map { unsafeDowncast($0, to: PromiseCore.self) }
        ExecutionFlags.with(isExecutingNow: false) { abandonWithoutRunning(source: source) }
    }

    /// Releases the callback of a job that will never run, and cancels what it would have
    /// resolved.
    ///
    /// - Parameter source: The resolved promise the job would have read, if it holds one.
    func abandonWithoutRunning(source: PromiseCore?) {
        preconditionFailure(
            "PromiseCallbackNode.abandonWithoutRunning() must be overridden by nodes that submit jobs")
    }

    /// The work of a node that fired on an asynchronous context, now running there.
    func run(source: PromiseCore) {
        preconditionFailure("PromiseCallbackNode.run(source:) must be overridden by nodes that submit jobs")
    }

    /// The work of a node that was submitted with ``submitAsJob(to:)``, now running.
    func runWithoutSource() {
        preconditionFailure(
            "PromiseCallbackNode.runWithoutSource() must be overridden by nodes that submit without a source")
    }
}

/// The callbacks of a promise that was just resolved, waiting to be run by ``CallbackDrain``.
@usableFromInline
struct ReadyCallbacks: @unchecked Sendable {
    // @unchecked Sendable: owned by one drain at a time; CoreInvariants: "Ownership in the drain".
    /// The resolved promise the callbacks read their result from. Held strongly while the
    /// callbacks run.
    @usableFromInline
    let source: PromiseCore
    /// The first callback still to run.
    @usableFromInline
    var head: PromiseCallbackNode?

    @usableFromInline
    init(source: PromiseCore, head: PromiseCallbackNode?) {
        self.source = source
        self.head = head
    }
}

/// Runs resolved callback lists with constant stack depth.
///
/// A callback that resolves another promise inline (a pipe, an `.immediate` `map`) returns that
/// promise's callbacks instead of running them. The drain runs them right away, before the rest of
/// the current list, which gives Tomorrowland's depth-first order (P = [a, pipe→C, b] with
/// C = [c1, c2] runs a, c1, c2, b) while a chain of a million links uses no stack at all.
@usableFromInline
enum CallbackDrain {
    /// Runs `head`, callbacks that `source` made ready, and everything they make ready, while the
    /// caller holds `source`: the list takes no reference to it (a job running on its executor,
    /// ``HandlerOutcome/settledInPlace(_:)``; ``ResultBox/resolve(_:)``, whose caller holds the box
    /// for the call).
    ///
    /// A single callback (a chain's next link) fires here with `source` borrowed, then what it made
    /// ready is drained as usual: the order ``run(_:)`` keeps, since a list with nothing left is
    /// replaced, not suspended. Several take the general drain, with a reference of its own, since
    /// their list may be suspended while another runs.
    ///
    /// - Parameter head: The first callback, with the list's reference to it, which this takes.
    @usableFromInline
    static func run(borrowing source: PromiseCore, head: Unmanaged<PromiseCallbackNode>?) {
        guard let head else { return }
        guard head._withUnsafeGuaranteedRef({ $0.next == nil }) else {
            run(ReadyCallbacks(source: source, head: head.takeRetainedValue()))
            return
        }
        // The list's reference to the node goes to the call, as in `run(_:)`.
        // CoreInvariants: "Ownership in the drain".
        run(head._withUnsafeGuaranteedRef { $0.fireHandingOver(source: source) })
    }

    /// Runs `initial` and everything it makes ready.
    ///
    /// Inlined, so that the frequent call with nothing ready (a registration on a pending promise,
    /// a callback that made nothing ready) costs a test, not a call that sets up the drain's frame.
    @inlinable
    @inline(__always)
    static func run(_ initial: consuming ReadyCallbacks?) {
        guard let ready = consume initial else { return }
        run(draining: ready)
    }

    /// ``run(_:)`` with something ready.
    @usableFromInline
    static func run(draining initial: consuming ReadyCallbacks) {
        var current = consume initial
        // Lists interrupted by a nested resolution, resumed last-in first-out. Stays empty for
        // straight chains, because an exhausted list is replaced rather than suspended.
        var suspended = SuspendedCallbackLists()
        // An executor ``PromiseJobBatch`` found not to be serial: not asked again.
        var notSerial: ObjectIdentifier?
        while true {
            // `take()` moves the node out of the list: no retain for the local, no release for
            // the list's reference (the local's is released once the node has fired).
            if let node = current.head.take() {
                current.head = node.next.take()
                // Callbacks in a row bound for one serial executor go to it as one job. They fire
                // without running user code, so gathering them changes no order.
                // The probe of `node` first, inline: a callback that is no candidate (`.immediate`,
                // a derived promise) costs one call here and nothing more (W2i, W1).
                if current.head != nil, let identity = node.batchExecutorIdentity, identity != notSerial {
                    // `unsafelyUnwrapped`: `current.head != nil` was checked just above.
                    switch PromiseJobBatch.submitIfBatching(
                        node, identity: identity, following: current.head.unsafelyUnwrapped, source: current.source)
                    {
                    case .submitted(let rest):
                        current.head = rest
                        continue
                    case .executorNotSerial:
                        notSerial = identity
                    case .nothingToGather:
                        break
                    }
                }
                // The drain's reference to the node goes to the call (see `fireHandingOver`): a
                // node submitted to an executor keeps it as the job's.
                // CoreInvariants: "Ownership in the drain".
                if let ready = Unmanaged.passRetained(consume node)._withUnsafeGuaranteedRef({
                    $0.fireHandingOver(source: current.source)
                }),
                    ready.head != nil
                {
                    if current.head != nil { suspended.push(current) }
                    current = ready
                }
            } else if let resumed = suspended.pop() {
                current = resumed
            } else {
                return
            }
        }
    }
}
