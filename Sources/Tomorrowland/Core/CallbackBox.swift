/// A promise derived by a callback (`map`, `then`, `recover`, …): its box also carries the
/// callback, its context and (if any) its token guard, so that deriving costs one allocation
/// instead of two.
///
/// The derived promise's ``PromiseCore/Handler`` is then a closure that captures nothing (it
/// reads all it needs from this box), which Swift represents without a heap context. Before,
/// the handler captured the callback, the context and the token guard, and that context was a
/// second allocation per link, about 300 instructions with its retains and its free (W1,
/// callgrind).
///
/// `Stored` is always an optional ``CallbackStorage`` (see ``Promise/deriveCallback``): the
/// token guard is stored only by the callbacks that have one, which keeps a `map` link's box
/// within 120 bytes (see ``PromiseCore``'s fields). It is a generic parameter of its own, rather
/// than a `Callback?` field, for the deinit's sake: a class's deinit is unspecialised generic
/// code, and destroying a field of type `Optional<Callback>` there would cost a runtime metadata
/// lookup per promise; a field whose type is the class's own parameter finds its metadata in the
/// class metadata (see ``PromiseBox``).
@usableFromInline
final class CallbackBox<Result: StoredPromiseResult, Stored>: DerivedBox<Result>, @unchecked Sendable {
    /// Where the callback runs.
    @usableFromInline
    let context: PromiseContext
    /// The user's closure (and token guard), until whoever runs it takes it out and sets `nil`,
    /// so that it is released on its context (B7).
    @usableFromInline
    @exclusivity(unchecked)
    var stored: Stored

    /// A pending derived box.
    @inlinable
    init(context: PromiseContext, stored: Stored, handler: @escaping Handler) {
        self.context = context
        self.stored = stored
        super.init(handler: handler)
    }
}

/// A callback as a ``CallbackBox`` stores it: with or without a token guard.
@usableFromInline
protocol CallbackStorage {
    associatedtype Callback
    /// The user's closure.
    var callback: Callback { get }
    /// Suppresses the callback when its token was invalidated since registration.
    var tokenGuard: TokenGuard? { get }
}

/// A callback registered without a token.
@usableFromInline
struct PlainCallback<Callback>: CallbackStorage {
    @usableFromInline
    let callback: Callback

    @inlinable
    init(callback: Callback) {
        self.callback = callback
    }

    @inlinable
    var tokenGuard: TokenGuard? { nil }
}

/// A callback registered with a token.
@usableFromInline
struct GuardedCallback<Callback>: CallbackStorage {
    @usableFromInline
    let callback: Callback
    @usableFromInline
    let guardNow: TokenGuard

    @inlinable
    init(callback: Callback, tokenGuard: TokenGuard) {
        self.callback = callback
        self.guardNow = tokenGuard
    }

    @inlinable
    var tokenGuard: TokenGuard? { guardNow }
}
