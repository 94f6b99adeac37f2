import Synchronization

/// Suppresses callbacks registered with it, and cancels promises, when invalidated.
///
/// A callback registered with a token remembers the token's generation; when the callback would
/// run, it is skipped if the token was invalidated since. Observer callbacks (`then`, `catch`,
/// `always`, `tap`, `onCancel`, `tryThen`) that are skipped still let their promise take the
/// upstream result; transforming callbacks (`map`, `flatMap`, …) cancel theirs. A token can be
/// reused after invalidation: only earlier registrations are affected.
///
/// Copies of a token are the same token. By default, the token invalidates itself when its last
/// copy is destroyed; callbacks registered with it do not keep it alive.
public struct PromiseInvalidationToken: CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    @usableFromInline
    let owner: TokenOwner

    /// The shared state, which callbacks capture.
    @inlinable
    var box: TokenBox { owner.box }

    /// Creates a token.
    ///
    /// - Parameter invalidateOnDeinit: Whether the token invalidates itself when its last copy
    ///   is destroyed. Defaults to `true`.
    public init(invalidateOnDeinit: Bool = true) {
        owner = TokenOwner(invalidateOnDeinit: invalidateOnDeinit)
    }

    /// Invalidates the token: callbacks registered with it so far will not run, and promises
    /// registered with ``requestCancelOnInvalidate(_:)`` get a cancel request.
    ///
    /// Tokens chained to this one with ``chainInvalidation(from:includingCancelWithoutInvalidating:)``
    /// are invalidated too.
    public func invalidate() {
        box.invalidate(bumpingGeneration: true)
    }

    /// Requests cancellation of the promises registered with ``requestCancelOnInvalidate(_:)``
    /// without invalidating the token: callbacks still run.
    public func cancelWithoutInvalidating() {
        box.invalidate(bumpingGeneration: false)
    }

    /// Requests cancellation of `promise` the next time the token is invalidated (or
    /// ``cancelWithoutInvalidating()`` is called).
    ///
    /// The registration holds `promise` weakly and is used up by the next invalidation.
    public func requestCancelOnInvalidate<V, E>(_ promise: Promise<V, E>) {
        box.registerCancellation(of: promise.box)
    }

    /// Invalidates this token whenever `token` is invalidated, from now on.
    ///
    /// - Parameters:
    ///   - token: The token to follow. Neither token keeps the other alive. Chaining a token to
    ///     itself does nothing; longer cycles are a programming error.
    ///   - includingCancelWithoutInvalidating: Whether `token.cancelWithoutInvalidating()`
    ///     is forwarded too. Defaults to `true`.
    public func chainInvalidation(from token: PromiseInvalidationToken, includingCancelWithoutInvalidating: Bool = true)
    {
        guard token.box !== box else { return }
        token.box.addChild(box, forwardingCancelWithoutInvalidating: includingCancelWithoutInvalidating)
    }

    /// `<PromiseInvalidationToken: 0x…>`.
    public var description: String {
        "<PromiseInvalidationToken: \(address(of: owner))>"
    }

    /// The description plus the generation and the sizes of the internal lists.
    public var debugDescription: String {
        "<PromiseInvalidationToken: \(address(of: owner)); box=\(box.debugDescription)>"
    }
}

extension PromiseInvalidationToken: Hashable {
    /// Whether both are copies of the same token.
    public static func == (lhs: PromiseInvalidationToken, rhs: PromiseInvalidationToken) -> Bool {
        lhs.owner === rhs.owner
    }

    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(owner))
    }
}

/// The object all copies of a token share; its death invalidates the token if asked to.
@usableFromInline
final class TokenOwner: Sendable {
    @usableFromInline
    let box = TokenBox()
    let invalidateOnDeinit: Bool

    init(invalidateOnDeinit: Bool) {
        self.invalidateOnDeinit = invalidateOnDeinit
    }

    deinit {
        if invalidateOnDeinit { box.invalidate(bumpingGeneration: true) }
    }
}

/// A token's generation and a callback's view of it.
@usableFromInline
struct TokenGuard: Sendable {
    @usableFromInline let box: TokenBox
    @usableFromInline let generation: UInt

    @usableFromInline
    init(box: TokenBox, generation: UInt) {
        self.box = box
        self.generation = generation
    }

    /// Whether the token was not invalidated since this guard was taken.
    @inlinable
    var isValid: Bool {
        box.generation.load(ordering: .acquiring) == generation
    }
}

extension Optional where Wrapped == PromiseInvalidationToken {
    /// The guard a callback registered now with this token keeps.
    @inlinable
    var guardNow: TokenGuard? {
        guard let token = self else { return nil }
        return TokenGuard(box: token.box, generation: token.box.generation.load(ordering: .acquiring))
    }
}

func address(of object: AnyObject) -> String {
    "0x" + String(UInt(bitPattern: ObjectIdentifier(object)), radix: 16)
}
