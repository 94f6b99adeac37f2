import Tomorrowland

/// Cancels a promise when the last reference to it goes, unless it was resolved first.
///
/// What work aimed at a loop holds instead of the bare resolver: a resolver dropped unresolved
/// leaves its promise pending while the promise is referenced, so work the loop releases without
/// running it (after shutdown) must cancel on its way out.
final class CancellingResolver<Value: Sendable, Failure: Sendable>: Sendable {
    let resolver: Promise<Value, Failure>.Resolver

    init(_ resolver: Promise<Value, Failure>.Resolver) {
        self.resolver = resolver
    }

    deinit {
        resolver.cancel()
    }
}
