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
/// `Stored` is always the ``CallbackStorage/Slot`` of a ``CallbackStorage`` (see
/// ``Promise/deriveCallback``), an optional: the token guard is stored only by the callbacks
/// that have one, which keeps a `map` link's box within 120 bytes (see ``PromiseCore``'s
/// fields). It is a generic parameter of its own, for the deinit's sake: a class's deinit is
/// unspecialised generic code, and destroying a field of type `Optional<Callback>`, with
/// `Callback` a parameter of the class, would cost a runtime metadata lookup for that optional
/// per promise; a field whose type is the class's own parameter finds its metadata in the class
/// metadata (see ``PromiseBox``).
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
    /// The type of the box's ``CallbackBox/stored``: an optional, `nil` once the callback was
    /// taken out.
    ///
    /// A callback without a token is stored as a plain `Callback?`, not as an optional of this
    /// wrapper: the box's deinit destroys the (empty) field through its type's value witnesses,
    /// and those of an optional closure are the runtime's own, while an optional of a generic
    /// struct goes through the struct's generated witnesses first (about 40 instructions more
    /// per `map` link, W1).
    associatedtype Slot
    /// This callback in its slot.
    var slot: Slot { get }
    /// Takes the callback out of a full slot, which is `nil` afterwards.
    static func take(from slot: inout Slot) -> Self
    /// Empties a slot, releasing the callback unrun.
    static func clear(_ slot: inout Slot)
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
    var slot: Callback? { callback }

    @inlinable
    static func take(from slot: inout Callback?) -> PlainCallback {
        PlainCallback(callback: slot.take().unsafelyUnwrapped)
    }

    @inlinable
    static func clear(_ slot: inout Callback?) {
        slot = nil
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
    var slot: GuardedCallback? { self }

    @inlinable
    static func take(from slot: inout GuardedCallback?) -> GuardedCallback {
        slot.take().unsafelyUnwrapped
    }

    @inlinable
    static func clear(_ slot: inout GuardedCallback?) {
        slot = nil
    }

    @inlinable
    var tokenGuard: TokenGuard? { guardNow }
}
