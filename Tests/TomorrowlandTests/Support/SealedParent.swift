import Tomorrowland
import TomorrowlandTestSupport

/// Creates a pending parent, lets `build` attach observers to it, and returns what `build`
/// returns together with the parent's resolver and a counter of the parent's cancel requests.
///
/// The parent's only handle is a local of this function, so the parent is sealed (every handle
/// gone) when this returns: automatic cancellation propagation can then reach it (D1). The
/// storage stays alive until the first cancel request, and `requests` records each
/// `onRequestCancel` call.
func withSealedParent<Value: Sendable, Failure: Sendable, Built>(
    _ type: Promise<Value, Failure>.Type = Promise<Value, Failure>.self,
    _ build: (Promise<Value, Failure>) -> Built
) -> (built: Built, resolver: Promise<Value, Failure>.Resolver, requests: Recorder<String>) {
    let (parent, resolver) = Promise<Value, Failure>.makeWithResolver()
    let requests = Recorder<String>()
    // The handler captures the resolver on purpose: that cycle keeps the parent's storage alive
    // (A3) until the first request or the resolution, even if the caller drops the resolver,
    // so a dropped resolver cannot cancel the parent behind the test's back.
    resolver.onRequestCancel(on: .immediate) { _ in
        withExtendedLifetime(resolver) {}
        requests.record("request")
    }
    return (build(parent), resolver, requests)
}
