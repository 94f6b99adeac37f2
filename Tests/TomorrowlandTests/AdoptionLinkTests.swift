import Testing
import TomorrowlandTestSupport

@testable import Tomorrowland

/// How a derived promise observes the promise its callback returned (`flatMap` and its
/// relatives): through its one upstream link, which the resolved upstream no longer needs, and
/// by registering itself on it, with no cancel handler and no pipe node of its own. The
/// behaviour must be what observing the adopted promise through those would give.
@Suite("Adoption links")
struct AdoptionLinkTests {
    typealias IntPromise = Promise<Int, String>

    /// Hands the flatMap callback a promise the test can stop referring to.
    final class Handoff: @unchecked Sendable {
        // Invariant: written before the parent resolves, read once by the callback on the
        // same thread (`.immediate`).
        var promise: IntPromise?
    }

    /// A pending promise whose only handle is in `handoff`, recording its cancel requests.
    static func makeInner(into handoff: Handoff, recording requests: Recorder<String>) -> IntPromise.Resolver {
        let (inner, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { _ in requests.record("inner") }
        handoff.promise = inner
        return resolver
    }

    @Test(
        "flatMap's result links the adopted promise in place of its resolved upstream, without a cancel handler or pipe"
    )
    func flatMapReplacesResolvedUpstream() {
        let innerRequests = Recorder<String>()
        let handoff = Handoff()
        let innerResolver = Self.makeInner(into: handoff, recording: innerRequests)
        let (parent, parentResolver) = IntPromise.makeWithResolver()
        let outer = parent.flatMap(on: .immediate) { _ -> IntPromise in
            defer { handoff.promise = nil }
            return handoff.promise!
        }
        parentResolver.fulfill(with: 1)
        #expect(outer.result == nil)
        #expect(outer.box.cancelHandlers == nil)
        // The adopting promise waits in the adopted one's list itself, not through a pipe node.
        #expect(innerResolver.box.callbackHead === outer.box)

        // The only handle of the adopted promise went with the callback: it is sealed.
        outer.requestCancel()
        #expect(innerRequests.values == ["inner"])
        #expect(outer.box.hasRequestedCancel)
        innerResolver.cancel()
        #expect(outer.result == .cancelled)
    }

    @Test(
        "a flatMap result whose cancel was requested before its callback ran passes the request to the adopted promise")
    func cancelRequestedBeforeAdoption() {
        let innerRequests = Recorder<String>()
        let (parent, parentResolver) = IntPromise.makeWithResolver()
        let handoff = Handoff()
        let outer = parent.flatMap(on: .immediate) { _ -> IntPromise in
            defer { handoff.promise = nil }
            return handoff.promise!
        }
        outer.requestCancel()
        let innerResolver = Self.makeInner(into: handoff, recording: innerRequests)
        // The parent ignores the request while its handle lives; its value still runs the
        // callback, and the adopted promise hears about the request as soon as it is adopted.
        parentResolver.fulfill(with: 1)
        #expect(innerRequests.values == ["inner"])
        innerResolver.fulfill(with: 7)
        #expect(outer.result == .value(7))
    }
}
