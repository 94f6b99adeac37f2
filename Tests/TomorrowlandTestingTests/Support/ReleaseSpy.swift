import Synchronization

/// Hands out tokens and counts how many were deinitialized, to see when captured state is
/// released.
final class ReleaseSpy: Sendable {
    final class Token: Sendable {
        private let onDeinit: @Sendable () -> Void
        init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
        deinit { onDeinit() }
    }

    private let released = Atomic<Int>(0)

    var releasedCount: Int { released.load(ordering: .relaxed) }

    /// A token that counts its release, then runs `andThen` (from its deinitializer).
    func token(andThen: @escaping @Sendable () -> Void = {}) -> Token {
        Token { [self] in
            released.add(1, ordering: .relaxed)
            andThen()
        }
    }
}
