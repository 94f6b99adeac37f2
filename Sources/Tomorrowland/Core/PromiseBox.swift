/// The typed storage of one promise: a ``PromiseCore`` plus the result.
///
/// - Important: `storedResult` is written once under the lock before the status becomes
///   `.resolved` and never changes afterwards, so it may be read without the lock by anyone who
///   observed `.resolved` under the lock, or was handed the box by such a thread.
@usableFromInline
final class PromiseBox<Value, Error>: PromiseCore, @unchecked Sendable {
    /// The result; meaningful only once the status is `.resolved` (`.cancelled` before).
    ///
    /// Not an optional on purpose: this class's deinit is generic code, and destroying a
    /// `PromiseResult<Value, Error>?` there costs two runtime metadata lookups (the optional's
    /// and the result's), a fifth of a `map` link; a plain `PromiseResult` costs one.
    @usableFromInline
    @exclusivity(unchecked)
    var storedResult: PromiseResult<Value, Error> = .cancelled

    /// A pending box; `handler` makes it a derived promise (see ``PromiseCore/Handler``).
    @inlinable
    init(handler: Handler? = nil) {
        super.init(status: .pending, handler: handler)
    }

    /// A box that is already resolved.
    @inlinable
    init(result: PromiseResult<Value, Error>) {
        storedResult = result
        super.init(status: .resolved, handler: nil)
        isCancelledResult = result.isCancelled
    }

    /// A box in the delayed state (`DelayedPromise`, `PromiseOperation`).
    init(delayed: Void) {
        super.init(status: .delayed, handler: nil)
    }

    deinit {
        // Unresolved storage that dies is cancelled: its callbacks see `.cancelled`. Nothing
        // else can reach the box now, so no lock is needed. `self` must not escape a deinit, so
        // the callbacks read their result from a stand-in box.
        guard status != .resolved, let head = callbackHead else { return }
        callbackHead = nil
        callbackTail = nil
        CallbackDrain.run(ReadyCallbacks(source: PromiseBox(result: .cancelled), head: head))
    }

    // MARK: Result

    /// The result, or `nil` while unresolved.
    @inlinable
    var result: PromiseResult<Value, Error>? {
        lock.withLock { status == .resolved ? storedResult : nil }
    }

    /// The result of a box known to be resolved (see the type's invariant).
    @inlinable
    var resolvedResult: PromiseResult<Value, Error> {
        storedResult
    }

    /// The result of `source`, a resolved box of this type, handed to a callback node.
    @inlinable
    static func resolvedResult(of source: PromiseCore) -> PromiseResult<Value, Error> {
        unsafeDowncast(source, to: PromiseBox<Value, Error>.self).resolvedResult
    }

    // MARK: Resolving

    /// Resolves the box if it is not resolved yet and returns its callbacks, ready to run.
    ///
    /// - Returns: `nil` when the box was already resolved (first resolution wins) or has no
    ///   callbacks. The caller must run what it gets (``CallbackDrain``), or return it to a drain.
    @inlinable
    func settle(_ result: PromiseResult<Value, Error>) -> ReadyCallbacks? {
        let taken: Taken? = lock.withLock {
            guard status != .resolved else { return nil }
            storedResult = result
            return markResolvedLocked(cancelled: result.isCancelled)
        }
        // Cancel handlers and the upstream link (in `taken`) are released here, outside the lock.
        guard let taken else { return nil }
        taken.finish()
        guard let head = taken.head else { return nil }
        return ReadyCallbacks(source: self, head: head)
    }

    /// Resolves the box and runs its callbacks.
    @inlinable
    func resolve(_ result: PromiseResult<Value, Error>) {
        CallbackDrain.run(settle(result))
    }
}

/// The two calls of a derived promise's ``PromiseCore/Handler``.
@usableFromInline
enum HandlerStage {
    /// The upstream resolved; decide whether the callback must run (on the thread that fired).
    case arrive
    /// Run the callback (on its context).
    case run
}

/// What a ``PromiseCore/Handler`` did.
@usableFromInline
enum HandlerOutcome {
    /// The derived promise is settled (or will be by a pipe); run these callbacks.
    case settled(ReadyCallbacks?)
    /// Call again with `.run` on this context.
    case dispatch(PromiseContext)

    @usableFromInline
    var ready: ReadyCallbacks? {
        if case .settled(let ready) = self { return ready }
        return nil
    }
}
