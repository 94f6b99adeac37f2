import Synchronization

/// Hands out tokens and counts how many were deinitialized: work that captures a token (and
/// nothing else holds it) tells when its owner released that work.
public final class ReleaseSpy: Sendable {
    /// Something work captures; its deinit counts a release.
    public final class Token: Sendable {
        private let onDeinit: @Sendable () -> Void

        init(onDeinit: @escaping @Sendable () -> Void) {
            self.onDeinit = onDeinit
        }

        deinit { onDeinit() }
    }

    private let released = Atomic<Int>(0)

    /// A spy that has handed out nothing.
    public init() {}

    /// How many of the tokens handed out were deinitialized so far.
    public var releasedCount: Int {
        // Acquiring: what a releasing thread did before the deinit is visible to the test after
        // it reads the count.
        released.load(ordering: .acquiring)
    }

    /// A token that counts its release, then runs `andThen` (from its deinitializer, on the
    /// thread that released it).
    public func token(andThen: @escaping @Sendable () -> Void = {}) -> Token {
        Token { [self] in
            released.add(1, ordering: .releasing)
            andThen()
        }
    }
}
