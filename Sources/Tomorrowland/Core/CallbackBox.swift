/// A promise derived by a callback (`map`, `then`, `recover`, …): its box also carries the
/// callback, its context and (if any) its token guard, so that deriving costs one allocation
/// instead of two.
///
/// The derived promise's ``PromiseCore/Handler`` is then a closure that captures nothing (it
/// reads all it needs from this box), which Swift represents without a heap context. A handler
/// capturing the callback, the context and the token guard would need a context of its own: a
/// second allocation per link, with its retains and its free.
///
/// ## The callback's storage
/// The callback (a ``CallbackStorage``: the user's closure, and the token guard of callbacks
/// that have one) lives in ``rawStorage``, words of a trivial type, and
/// ``DerivedBox/holdsCallback`` says whether it is there. A class's deinit is unspecialised
/// generic code: a field of the callback's own (generic) type would be destroyed there through
/// its type's value witnesses, calls that every `map` link would pay for an optional closure
/// that is empty by then in all but a rare case. A field of a type known to be trivial
/// (`BitwiseCopyable`) is not destroyed at all; the deinit destroys the callback itself, through
/// its type, only when it is still there.
///
/// Soundness: every access reads and writes the callback as `Storage`, through a pointer to
/// ``rawStorage`` typed `Storage` (``withStorage(_:)``): a closure inside is stored and loaded at
/// one and the same abstraction (unlike a closure bit-cast to another function type, which may
/// not come back at the abstraction it is called with). ``rawStorage`` is never read as its own
/// type; being trivial, it needs no destruction, and Swift values may be moved bitwise, so the
/// words are a valid home for the value wherever the compiler keeps them. `Storage` fits in them
/// (checked by ``fits``, a constant in specialised code, and by `precondition` in `init`).
///
/// Kept within 120 bytes for a `map` link (see ``PromiseCore``'s fields): the flag sits in the
/// padding after a small result, and `Storage.Raw` is as large as the plain callback, 16 bytes.
@usableFromInline
final class CallbackBox<Result: StoredPromiseResult, Storage: CallbackStorage>: DerivedBox<Result>,
    @unchecked Sendable
{
    // @unchecked Sendable: CoreInvariants: "Fields read without the lock".
    /// Where the callback runs.
    @usableFromInline
    let context: PromiseContext
    /// Raw storage for the callback, while ``DerivedBox/holdsCallback``; see the type's
    /// discussion. Whoever runs the callback releases it right after, on its context (B7).
    @usableFromInline
    @exclusivity(unchecked)
    var rawStorage: Storage.Raw

    /// A pending derived box that holds `storage`.
    @inlinable
    init(context: PromiseContext, storage: Storage, handler: @escaping Handler) {
        precondition(Self.fits, "a callback's storage must fit its raw words")
        self.context = context
        self.rawStorage = Storage.Raw()
        super.init(handler: handler)
        withStorage { $0.initialize(to: storage) }
        holdsCallback = true
    }

    deinit {
        // A box that dies with its callback (a job its executor dropped without running or
        // abandoning it) releases it here; every other box has given it up by now.
        if holdsCallback { releaseHeldCallback() }
    }

    /// ``clearStorage()`` for the deinit, out of line: inlined, it made the deinit set up the
    /// stack frame of this rare path on every call.
    @inline(never)
    private final func releaseHeldCallback() {
        clearStorage()
    }

    /// Whether `Storage` fits in `Storage.Raw` (a constant in specialised code).
    @inlinable
    static var fits: Bool {
        MemoryLayout<Storage>.size <= MemoryLayout<Storage.Raw>.size
            && MemoryLayout<Storage>.alignment <= MemoryLayout<Storage.Raw>.alignment
    }

    /// Calls `body` with ``rawStorage`` as memory for one `Storage`.
    @inlinable
    @inline(__always)
    final func withStorage<R>(_ body: (UnsafeMutablePointer<Storage>) -> R) -> R {
        // CoreInvariants: "The raw callback storage and the 120-byte budget": read and written
        // only as `Storage`, and only while `holdsCallback` says the words hold one.
        withUnsafeMutableBytes(of: &rawStorage) {
            body($0.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Storage.self))
        }
    }

    /// Releases the callback unrun; the box holds it no more. Call only while it holds it (checked
    /// in debug builds).
    @inlinable
    @inline(__always)
    final func clearStorage() {
        assert(holdsCallback, "clearStorage() on a box that no longer holds its callback")
        holdsCallback = false
        withStorage { _ = $0.move() }
    }

    /// Releases the callback once it ran (on its context, B7); the box holds it no more. Call only
    /// while it holds it (checked in debug builds).
    ///
    /// A callback whose words hold no reference (``CallbackStorage/holdsNoReference(_:)``) needs no
    /// destruction: the words are left as they are, with no call of `swift_release` for a `nil`
    /// context.
    @inlinable
    @inline(__always)
    final func releaseStorageAfterRun() {
        assert(holdsCallback, "releaseStorageAfterRun() on a box that no longer holds its callback")
        holdsCallback = false
        if Storage.holdsNoReference(rawStorage) { return }
        withStorage { _ = $0.move() }
    }
}

/// Words of raw storage for a callback in a ``CallbackBox``: a trivial type, so that the box's
/// deinit does not destroy it.
@usableFromInline
protocol CallbackWords: BitwiseCopyable {
    /// Zeroed words.
    init()
}

/// Two words: a closure.
@usableFromInline
struct TwoCallbackWords: CallbackWords {
    @usableFromInline
    var words: (UInt, UInt) = (0, 0)

    @inlinable
    init() {}
}

/// Four words: a closure and a ``TokenGuard``.
@usableFromInline
struct FourCallbackWords: CallbackWords {
    @usableFromInline
    var words: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)

    @inlinable
    init() {}
}

/// Six words: a closure, an optional ``TokenGuard`` and a ``CapturedCallbackContext``.
@usableFromInline
struct SixCallbackWords: CallbackWords {
    @usableFromInline
    var words: (UInt, UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0, 0)

    @inlinable
    init() {}
}

/// A callback as a ``CallbackBox`` stores it: with or without a token guard, with or without
/// the context captured at its registration.
@usableFromInline
protocol CallbackStorage {
    associatedtype Callback
    /// The raw words the box keeps this in (see ``CallbackBox``).
    associatedtype Raw: CallbackWords
    /// The user's closure.
    var callback: Callback { get }
    /// Suppresses the callback when its token was invalidated since registration.
    var tokenGuard: TokenGuard? { get }
    /// Whether this storage kind carries a captured context (a constant in specialised code).
    static var carriesContext: Bool { get }
    /// Runs `body` (the callback's run) with the context captured at registration restored, if
    /// one was (B10); otherwise just runs it.
    func runInCapturedContext<R>(_ body: () throws -> R) rethrows -> R
    /// Whether `raw`, holding one value of this type, holds no reference: destroying it would
    /// release nothing, so it may be left undestroyed. False whenever that is not known.
    static func holdsNoReference(_ raw: Raw) -> Bool
}

extension CallbackStorage {
    /// Not known: the value is destroyed.
    @inlinable
    @inline(__always)
    static func holdsNoReference(_ raw: Raw) -> Bool { false }
}

/// A callback registered without a token.
@usableFromInline
struct PlainCallback<Callback>: CallbackStorage {
    @usableFromInline
    typealias Raw = TwoCallbackWords

    @usableFromInline
    let callback: Callback

    @inlinable
    init(callback: Callback) {
        // `holdsNoReference(_:)` reads the words as a closure's.
        assert(
            MemoryLayout<Callback>.size == MemoryLayout<TwoCallbackWords>.size
                && "\(Callback.self)".split(separator: " ").contains("->"),
            "a plain callback is a closure")
        self.callback = callback
    }

    @inlinable
    var tokenGuard: TokenGuard? { nil }

    @inlinable
    static var carriesContext: Bool { false }

    @inlinable
    @inline(__always)
    func runInCapturedContext<R>(_ body: () throws -> R) rethrows -> R { try body() }

    /// Whether the closure's context is `nil` (it captures nothing): CoreInvariants: "The raw
    /// callback storage and the 120-byte budget". A Swift closure is two words, the function and
    /// its context, a reference that is null when there is none; the callback families store
    /// only closures here (checked in debug builds by `init`).
    @inlinable
    @inline(__always)
    static func holdsNoReference(_ raw: TwoCallbackWords) -> Bool { raw.words.1 == 0 }
}

/// A callback registered with a token.
@usableFromInline
struct GuardedCallback<Callback>: CallbackStorage {
    @usableFromInline
    typealias Raw = FourCallbackWords

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

    @inlinable
    static var carriesContext: Bool { false }

    @inlinable
    @inline(__always)
    func runInCapturedContext<R>(_ body: () throws -> R) rethrows -> R { try body() }
}

/// A callback registered while context propagation was on (B10): with its token guard, if any,
/// and the context current at registration, which its run restores.
@usableFromInline
struct ContextCarryingCallback<Callback>: CallbackStorage {
    @usableFromInline
    typealias Raw = SixCallbackWords

    @usableFromInline
    let callback: Callback
    @usableFromInline
    let tokenGuard: TokenGuard?
    @usableFromInline
    let capturedContext: any CapturedCallbackContext

    @inlinable
    init(callback: Callback, tokenGuard: TokenGuard?, capturedContext: any CapturedCallbackContext) {
        self.callback = callback
        self.tokenGuard = tokenGuard
        self.capturedContext = capturedContext
    }

    @inlinable
    static var carriesContext: Bool { true }

    @inlinable
    func runInCapturedContext<R>(_ body: () throws -> R) rethrows -> R {
        try capturedContext.withRestored(body)
    }
}
