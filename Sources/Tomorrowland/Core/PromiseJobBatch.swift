/// Several callbacks of one resolution, bound for one serial executor, handed to it as one job.
///
/// When a promise resolves with two or more callbacks in a row on the same serial executor (a
/// loop), ``CallbackDrain`` links them into one of these and submits it once: one ready entry
/// instead of one per callback, and the callbacks read the result from the promise this job
/// holds instead of each copying it. On a serial executor that is the same as submitting them one
/// by one: they were submitted one after the other with nothing in between, so nothing else could
/// have run between them, and they still run in registration order.
///
/// Only nodes whose firing on an executor submits and does nothing else (runs no user code) are
/// gathered: ``PromiseCallbackNode/batchExecutorIdentity``.
///
/// - Important: `@unchecked Sendable` for the same reason as ``PromiseCallbackNode``: the chain
///   belongs to the drain that builds it, then to the executor it is handed to, which calls exactly
///   one of ``run()`` and ``abandon()``.
final class PromiseJobBatch: PromiseJob, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    /// The resolved promise every callback of the batch reads its result from.
    private let source: PromiseCore
    /// The first callback still to run; the others follow through ``PromiseCallbackNode/next``.
    @exclusivity(unchecked)
    private var head: PromiseCallbackNode?

    private init(source: PromiseCore, head: PromiseCallbackNode) {
        self.source = source
        self.head = head
    }

    /// What ``submitIfBatching(_:identity:following:source:)`` did.
    enum Outcome {
        /// It submitted a batch; the list goes on at `rest`.
        case submitted(rest: PromiseCallbackNode?)
        /// The executor is not serial: the drain fires the callbacks bound for it one by one, and
        /// need not ask again for the rest of the list.
        case executorNotSerial
        /// The next callback is bound elsewhere: nothing to gather.
        case nothingToGather
    }

    /// Gathers `first`, `second` and the callbacks after them bound for the same serial executor
    /// (a run of candidates with one ``PromiseCallbackNode/batchExecutorIdentity``) into one job
    /// and submits it. Touches nothing unless it returns ``Outcome/submitted(rest:)``.
    ///
    /// The list is borrowed (the drain's loop keeps it in registers): `second` and the callbacks
    /// after it stay linked through ``PromiseCallbackNode/next`` as they are, and the batch is cut
    /// off after its last callback.
    ///
    /// - Parameters:
    ///   - first: A callback just taken from the front of a resolved list.
    ///   - identity: `first`'s ``PromiseCallbackNode/batchExecutorIdentity``.
    ///   - second: The callback after it, the head of the rest of that list.
    ///   - source: The resolved promise of that list.
    // Never inlined into the drain: there it would cost every list registers and spills (W1, W4
    // and W7, whose lists hold one callback and never batch).
    @inline(never)
    static func submitIfBatching(
        _ first: PromiseCallbackNode, identity: ObjectIdentifier, following second: PromiseCallbackNode,
        source: PromiseCore
    ) -> Outcome {
        guard second.batchExecutorIdentity == identity, let executor = first.batchExecutor else {
            return .nothingToGather
        }
        // Gathering runs the callbacks one after the other: right for a serial executor only,
        // where they could not have run side by side anyway. The drain remembers a "no", so the
        // cast (a protocol conformance check, too costly to pay per callback) is paid once per
        // list, not per callback.
        guard executor is any SerialPromiseExecutor else { return .executorNotSerial }
        var last = second
        while let following = last.next, following.batchExecutorIdentity == identity {
            last = following
        }
        let rest = last.next.take()
        first.next = second
        executor.submit(job: PromiseJobBatch(source: source, head: first))
        return .submitted(rest: rest)
    }

    /// Runs the callbacks in registration order, on the executor's thread.
    func run() {
        ExecutionFlags.with(isExecutingNow: false) {
            // Each node is released once it ran: its closure was released inside `run(source:)`.
            while let node = head.take() {
                head = node.next.take()
                node.run(source: source)
            }
        }
    }

    /// Releases every callback unrun (the executor will never run the batch); see
    /// ``PromiseJob/abandon()``.
    func abandon() {
        ExecutionFlags.with(isExecutingNow: false) {
            while let node = head.take() {
                head = node.next.take()
                node.abandonWithoutRunning(source: source)
            }
        }
    }

    deinit {
        // An executor that dropped the batch without running it: unlink the chain iteratively, so
        // that a long batch is not released by recursion.
        while let node = head.take() {
            head = node.next.take()
        }
    }
}
