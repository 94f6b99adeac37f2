import Testing
import TomorrowlandTestSupport
import TomorrowlandTesting

@testable import Tomorrowland

/// A promise's link to the upstream it observes with cancel propagation counts no references
/// (`UpstreamLink`): it may be followed only while the upstream's memory is certain to be there.
/// These tests check the rule's cases where the upstream goes away while the linked promise is
/// still pending: the link must be gone first, so that a cancel request on the promise never
/// follows it into freed memory (AddressSanitizer, which CI runs on this suite, would report
/// that; the link checks report it without).
@Suite("upstream links")
struct UpstreamLinkTests {
    typealias IntPromise = Promise<Int, String>

    @Test("a derived promise whose upstream dies unresolved loses its link before its callback is even queued")
    func upstreamDyingUnresolvedUnlinksACallbackOnAnExecutor() {
        let executor = ManualJobExecutor()
        let seen = Recorder<PromiseResult<Int, String>>()
        var child: IntPromise?
        do {
            // A resolver is a value: dropping it with the promise destroys the box unresolved,
            // which runs its callbacks with `.cancelled` from a stand-in.
            let (upstream, _) = IntPromise.makeWithResolver()
            child = upstream.mapResult(on: .executor(executor)) { result in
                seen.record(result)
                return .value(7)
            }
        }
        let derived = child!
        #expect(executor.pendingCount == 1)
        #expect(derived.box.upstream == nil)
        // Would follow the link to the freed upstream if it were still set.
        derived.requestCancel()
        executor.runPending()
        #expect(seen.values == [.cancelled])
        #expect(derived.result == .value(7))
    }

    @Test("a timeout whose upstream dies unresolved loses its link before its timer can follow it")
    func upstreamDyingUnresolvedUnlinksATimeout() throws {
        try withTestLoop { loop in
            var timeout: Promise<Int, PromiseTimeoutError<String>>?
            do {
                let (upstream, _) = IntPromise.makeWithResolver()
                timeout = upstream.timeout(on: .loop(loop), delay: .seconds(5))
            }
            let pending = timeout!
            #expect(pending.box.upstream == nil)
            pending.requestCancel()
            loop.runAll()
            #expect(pending.result == .cancelled)
        }
    }

    @Test("a pipe into a promise linked to an upstream that dies unresolved settles it and drops the link")
    func upstreamDyingUnresolvedSettlesAPipedChild() {
        var child: IntPromise?
        do {
            let (upstream, _) = IntPromise.makeWithResolver()
            child = upstream.makeChild()
        }
        #expect(child!.result == .cancelled)
        #expect(child!.box.upstream == nil)
    }

    @Test("a delayed promise drops its link when its upstream resolves, before the wait")
    func delayUnlinksWhenItsUpstreamResolves() throws {
        try withTestLoop { loop in
            var delayed: IntPromise?
            do {
                let (upstream, resolver) = IntPromise.makeWithResolver()
                delayed = upstream.delay(on: .loop(loop), .seconds(2))
                #expect(delayed!.box.upstream != nil)
                resolver.fulfill(with: 1)
                #expect(delayed!.box.upstream == nil)
            }
            // The upstream is freed; a cancel request does not shorten the wait for a value.
            delayed!.requestCancel()
            loop.advance(by: .seconds(2))
            #expect(delayed!.result == .value(1))
        }
    }

    @Test("a derived promise keeps its link while its callback waits: the queued job holds the upstream")
    func resolvedUpstreamIsHeldByTheJobUntilTheChildResolves() {
        let executor = ManualJobExecutor()
        var child: IntPromise?
        do {
            let (upstream, resolver) = IntPromise.makeWithResolver()
            child = upstream.map(on: .executor(executor)) { $0 * 10 }
            resolver.fulfill(with: 1)
        }
        // The upstream's handle and resolver are gone: the job is what holds it now.
        let derived = child!
        #expect(executor.pendingCount == 1)
        #expect(derived.box.upstream != nil)
        // Follows the link into the resolved upstream, which the job keeps alive.
        derived.requestCancel()
        #expect(derived.box.upstream == nil)
        executor.runPending()
        #expect(derived.result == .value(10))
    }

    @Test("a cancel request passes through the link to a pending upstream with no other observer")
    func cancelRequestReachesAPendingUpstream() {
        let upstreamRequests = Recorder<String>()
        var child: IntPromise?
        let resolver: IntPromise.Resolver
        do {
            let (upstream, upstreamResolver) = IntPromise.makeWithResolver()
            upstreamResolver.onRequestCancel(on: .immediate) { _ in upstreamRequests.record("upstream") }
            child = upstream.map(on: .immediate) { $0 + 1 }
            resolver = upstreamResolver
        }
        child!.requestCancel()
        #expect(upstreamRequests.values == ["upstream"])
        #expect(child!.box.upstream == nil)
        resolver.cancel()
        #expect(child!.result == .cancelled)
    }
}
