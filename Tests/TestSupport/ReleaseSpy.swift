import Synchronization

/// Hands out tokens and counts how many were deinitialized: work that captures a token (and
/// nothing else holds it) tells when its owner released that work.
package final class ReleaseSpy: Sendable {
    /// Something work captures; its deinit counts a release.
    package final class Token: Sendable {
        private let onDeinit: @Sendable () -> Void

        init(onDeinit: @escaping @Sendable () -> Void) {
            self.onDeinit = onDeinit
        }

        deinit { onDeinit() }
    }

    private let released = Atomic<Int>(0)

    /// A spy that has handed out nothing.
    package init() {}

    /// How many of the tokens handed out were deinitialized so far.
    package var releasedCount: Int {
        // Acquiring: what a releasing thread did before the deinit is visible to the test after
        // it reads the count.
        released.load(ordering: .acquiring)
    }

    /// A token that counts its release, then runs `andThen` (from its deinitializer, on the
    /// thread that released it).
    package func token(andThen: @escaping @Sendable () -> Void = {}) -> Token {
        Token { [self] in
            released.add(1, ordering: .releasing)
            andThen()
        }
    }
}
