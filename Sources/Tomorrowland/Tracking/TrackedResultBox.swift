import CTomorrowlandSupport

/// The box of a root promise that the pending-promise tracking recorded.
///
/// A subclass, so that only recorded promises pay for the tracking: an untracked box (every box
/// while tracking is off, every derived one always) has no field and no deinit check for it. Its
/// deinit takes the promise out of the registry and, if the promise is still pending, reports
/// its resolver as dropped (the promise is then cancelled, as any promise whose resolvers are all
/// gone).
@usableFromInline
final class TrackedResultBox<Result: StoredPromiseResult>: RootBox<Result>, @unchecked Sendable {
    // @unchecked Sendable: no state of its own; CoreInvariants: "Fields read without the lock".

    deinit {
        // Nothing else refers to the box: its status needs no lock. A delayed promise that never
        // started had no resolver to drop.
        guard let record = PendingPromiseRegistry.shared.remove(self) else { return }
        if status == .pending || status == .cancelRequested {
            PendingPromiseTracking.reportDroppedResolver(
                record.pendingPromise(isCancelRequested: status == .cancelRequested))
        }
    }
}

extension ResultBox {
    /// A pending box for a root promise made at `fileID`:`line`: a plain one while tracking is
    /// off (one relaxed load and a branch) or when sampling skips this root (a thread-local
    /// count), a recorded one otherwise.
    ///
    /// Inlined, so that the boxes are made with their types known (no generic metadata lookup);
    /// only the recording is out of line.
    @inlinable
    @inline(__always)
    static func makeRoot<Value, Error>(
        fileID: StaticString, line: UInt, context: PromiseContext?
    ) -> ResultBox<Result> where Result == PromiseResult<Value, Error> {
        let interval = twl_get_promise_tracking_interval()
        if _fastPath(interval == 0) { return RootBox() }
        return makeRootWhileTracking(interval: interval, fileID: fileID, line: line, context: context)
    }

    /// ``makeRoot(fileID:line:context:)`` while tracking is on. Out of line, so that the code
    /// around a root's creation is the same as without tracking; inlinable, so that the caller's
    /// module specialises it (boxes made with their types known, no generic metadata lookup).
    @inlinable
    @inline(never)
    static func makeRootWhileTracking<Value, Error>(
        interval: UInt32, fileID: StaticString, line: UInt, context: PromiseContext?
    ) -> ResultBox<Result> where Result == PromiseResult<Value, Error> {
        guard twl_promise_tracking_take_sample(interval) else { return RootBox() }
        let box = TrackedResultBox<Result>()
        recordRootPromise(
            box, valueType: Value.self, errorType: Error.self, fileID: fileID, line: line, context: context)
        return box
    }

    /// A box in the delayed state for a `DelayedPromise` made at `fileID`:`line`, recorded while
    /// tracking is on (it is listed once started).
    static func makeDelayedRoot<Value, Error>(
        fileID: StaticString, line: UInt, context: PromiseContext
    ) -> ResultBox<Result> where Result == PromiseResult<Value, Error> {
        let interval = twl_get_promise_tracking_interval()
        if interval == 0 || !twl_promise_tracking_take_sample(interval) { return RootBox(delayed: ()) }
        let box = TrackedResultBox<Result>(delayed: ())
        recordRootPromise(
            box, valueType: Value.self, errorType: Error.self, fileID: fileID, line: line, context: context)
        return box
    }
}

/// Records `box`, a root promise's ``TrackedResultBox`` made just now, in the registry: where,
/// when, on which context, in which `withTestLoop` scope and on which executor's thread.
@usableFromInline
@inline(never)
func recordRootPromise(
    _ box: PromiseCore, valueType: Any.Type, errorType: Any.Type, fileID: StaticString, line: UInt,
    context: PromiseContext?
) {
    let scope = PendingPromiseScope.current
    let executor = UInt(bitPattern: twl_get_current_executor())
    let virtualTime = scope?.now()
    let createdAt = ContinuousClock.now
    PendingPromiseRegistry.shared.add(box) { sequence in
        PromiseCreationRecord(
            valueType: valueType, errorType: errorType, fileID: fileID, line: line, context: context,
            createdAt: createdAt, scope: scope, virtualCreatedAt: virtualTime, creatorExecutor: executor,
            sequence: sequence)
    }
}
