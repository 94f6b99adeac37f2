import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `Promise.Resolver` and promise creation: first-wins resolution (A2), adopting another
/// promise (A7), cancel requests (A8, C1–C3), `handleCallback` (L1), dropped resolvers (A3) and
/// the initialisers (A4–A6).
@Suite("Resolver and promise creation")
struct ResolverTests {
    typealias IntPromise = Promise<Int, String>

    enum Resolution: String, CaseIterable, Sendable {
        case fulfill, reject, cancel, resolveWithResult, resolveWithPromise

        func apply(to resolver: IntPromise.Resolver, value: Int) {
            switch self {
            case .fulfill: resolver.fulfill(with: value)
            case .reject: resolver.reject(with: "error \(value)")
            case .cancel: resolver.cancel()
            case .resolveWithResult: resolver.resolve(with: .value(value))
            case .resolveWithPromise: resolver.resolve(with: IntPromise(fulfilled: value))
            }
        }

        func expected(value: Int) -> String {
            switch self {
            case .fulfill, .resolveWithResult, .resolveWithPromise: "value(\(value))"
            case .reject: "error(error \(value))"
            case .cancel: "cancelled"
            }
        }
    }

    // MARK: A2: the first resolution wins.

    @Test(
        "the first resolution wins and later ones are silent no-ops", arguments: Resolution.allCases,
        Resolution.allCases)
    func firstResolutionWins(first: Resolution, second: Resolution) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let seen = Recorder<String>()
        promise.tap(on: .immediate) { seen.record(describe($0)) }
        #expect(promise.result == nil)
        first.apply(to: resolver, value: 1)
        second.apply(to: resolver, value: 2)
        resolver.fulfill(with: 3)
        #expect(describe(promise.result) == first.expected(value: 1))
        #expect(seen.values == [first.expected(value: 1)])
    }

    @Test("resolve(with: result) resolves with each kind of result", arguments: Outcome.allCases)
    func resolveWithResult(outcome: Outcome) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let result: PromiseResult<Int, String> =
            switch outcome {
            case .value: .value(42)
            case .error: .error("bad")
            case .cancelled: .cancelled
            }
        resolver.resolve(with: result)
        #expect(describe(promise.result) == passedThrough(outcome))
    }

    @Test("resolve(with: PromiseResult<_, E>) upcasts E on a StdPromise (L2)")
    func resolveWithTypedResultUpcasts() {
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        resolver.resolve(with: PromiseResult<Int, TestError>.error(.other))
        #expect(describe(promise.result) == "error(other)")
    }

    @Test("resolve(with: Result) maps success and failure")
    func resolveWithSwiftResult() {
        let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
        resolver.resolve(with: Result<Int, TestError>.success(5))
        #expect(describe(promise.result) == "value(5)")
    }

    // MARK: A7: adopting another promise.

    @Test("resolve(with: an already-resolved promise) resolves before returning", arguments: Outcome.allCases)
    func resolveWithResolvedPromiseIsSynchronous(outcome: Outcome) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let (other, otherResolver) = IntPromise.makeWithResolver()
        otherResolver.settle(outcome)
        resolver.resolve(with: other)
        #expect(describe(promise.result) == passedThrough(outcome))
    }

    @Test("resolve(with:) on an already-resolved promise does not pin the other promise's cancellation (A2, D1)")
    func resolveWithPromiseAfterResolutionDoesNotObserveTheOtherPromise() {
        let (child, _, requests) = withSealedParent(IntPromise.self) { parent in
            let (resolved, resolvedResolver) = IntPromise.makeWithResolver()
            resolvedResolver.fulfill(with: 1)
            // A no-op (A2): it must not count as an observer of `parent` that never cancels.
            resolvedResolver.resolve(with: parent)
            #expect(resolved.result == .value(1))
            return parent.map(on: .immediate) { $0 }
        }
        child.requestCancel()
        #expect(requests.values == ["request"])
    }

    @Test("resolve(with: a pending promise) adopts its result on the resolving thread, with no hop")
    func resolveWithPendingPromiseAdoptsOnResolvingThread() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let (other, otherResolver) = IntPromise.makeWithResolver()
        resolver.resolve(with: other)
        #expect(promise.result == nil)
        let seenOn = Recorder<String?>()
        promise.tap(on: .immediate) { _ in seenOn.record(currentQueueTag) }
        let queue = makeTaggedQueue("resolver.adopt")
        queue.async { otherResolver.fulfill(with: 8) }
        #expect(describe(await waitForResult(promise)) == "value(8)")
        #expect(seenOn.values == ["resolver.adopt"])
    }

    // MARK: C1–C3, A8: cancel requests.

    @Test("requestCancel is advisory: the promise stays pending and may still be fulfilled (A1, C1)")
    func requestCancelIsAdvisory() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        promise.requestCancel()
        #expect(promise.result == nil)
        #expect(resolver.hasRequestedCancel)
        resolver.fulfill(with: 1)
        #expect(describe(promise.result) == "value(1)")
        #expect(!resolver.hasRequestedCancel)
    }

    @Test(".immediate onRequestCancel handlers run inline, once, in registration order (C2)")
    func immediateHandlersRunInlineInOrder() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let calls = Recorder<String>()
        resolver.onRequestCancel(on: .immediate) { _ in calls.record("first") }
        resolver.onRequestCancel(on: .immediate) { _ in calls.record("second") }
        resolver.onRequestCancel(on: .immediate) { handlerResolver in
            calls.record("third sees request: \(handlerResolver.hasRequestedCancel)")
        }
        #expect(calls.values.isEmpty)
        promise.requestCancel()
        #expect(calls.values == ["first", "second", "third sees request: true"])
        promise.requestCancel()
        #expect(calls.count == 3)
    }

    @Test("a handler can cancel the promise through the resolver it is given")
    func handlerCancelsThroughItsResolver() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { $0.cancel() }
        promise.requestCancel()
        #expect(describe(promise.result) == "cancelled")
    }

    @Test("requestCancel on a resolved promise does nothing (C1)", arguments: [Outcome.value, .error])
    func requestCancelAfterResolutionDoesNothing(outcome: Outcome) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let calls = Recorder<String>()
        resolver.onRequestCancel(on: .immediate) { _ in calls.record("handler") }
        resolver.settle(outcome)
        promise.requestCancel()
        #expect(calls.values.isEmpty)
        #expect(!resolver.hasRequestedCancel)
        #expect(describe(promise.result) == passedThrough(outcome))
    }

    @Test("a queued handler is skipped when a value arrives before it runs (C2)")
    func queuedHandlerIsSkippedAfterResolution() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let queue = makeTaggedQueue("resolver.skip")
        let calls = Recorder<String>()
        resolver.onRequestCancel(on: .queue(queue)) { _ in calls.record("handler") }
        queue.async {
            // The handler is queued behind this block, so it runs after the fulfilment.
            promise.requestCancel()
            resolver.fulfill(with: 1)
        }
        await drain(queue)
        await drain(queue)
        #expect(calls.values.isEmpty)
        #expect(describe(promise.result) == "value(1)")
    }

    @Test("a queued handler runs on its queue when the promise is still pending")
    func queuedHandlerRunsOnItsQueue() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let queue = makeTaggedQueue("resolver.handler")
        let calls = Recorder<String?>()
        resolver.onRequestCancel(on: .queue(queue)) { handlerResolver in
            calls.record(currentQueueTag)
            handlerResolver.cancel()
        }
        promise.requestCancel()
        #expect(describe(await waitForResult(promise)) == "cancelled")
        #expect(calls.values == ["resolver.handler"])
    }

    @Test("a .nowOr(q) handler on a pending promise is dispatched to q, not run inline (C2)")
    func nowOrHandlerIsDispatched() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let queue = makeTaggedQueue("resolver.nowOrHandler")
        let calls = Recorder<String>()
        resolver.onRequestCancel(on: .nowOr(.queue(queue))) { _ in
            calls.record("handler on \(currentQueueTag ?? "-") now=\(PromiseContext.isExecutingNow)")
        }
        // Hold the queue so that a dispatched handler cannot run before "requested" is recorded;
        // a handler run inline would be recorded first.
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        promise.requestCancel()
        calls.record("requested")
        gate.signal()
        await drain(queue)
        #expect(calls.values == ["requested", "handler on resolver.nowOrHandler now=false"])
    }

    @Test("onRequestCancel after a request or cancellation runs at once; after a value it never runs (C3)")
    func lateOnRequestCancelRegistration() async {
        let calls = Recorder<String>()
        let (requested, requestedResolver) = IntPromise.makeWithResolver()
        requested.requestCancel()
        requestedResolver.onRequestCancel(on: .immediate) { _ in calls.record("requested") }
        #expect(calls.values == ["requested"])

        let (cancelled, cancelledResolver) = IntPromise.makeWithResolver()
        cancelledResolver.cancel()
        cancelledResolver.onRequestCancel(on: .nowOr(.main)) { _ in
            calls.record("cancelled, now: \(PromiseContext.isExecutingNow)")
        }
        #expect(calls.values == ["requested", "cancelled, now: true"])
        #expect(describe(cancelled.result) == "cancelled")

        let queue = makeTaggedQueue("resolver.late")
        requestedResolver.onRequestCancel(on: .queue(queue)) { _ in calls.record("queued \(currentQueueTag ?? "-")") }
        await drain(queue)
        #expect(calls.values.last == "queued resolver.late")

        let (fulfilled, fulfilledResolver) = IntPromise.makeWithResolver()
        fulfilledResolver.fulfill(with: 1)
        fulfilled.requestCancel()
        fulfilledResolver.onRequestCancel(on: .immediate) { _ in calls.record("fulfilled") }
        #expect(!calls.values.contains("fulfilled"))
    }

    @Test("hasRequestedCancel: false with no request, true after a plain cancel() (A8)")
    func hasRequestedCancelWithoutRequest() {
        let (_, resolver) = IntPromise.makeWithResolver()
        #expect(!resolver.hasRequestedCancel)
        resolver.cancel()
        #expect(resolver.hasRequestedCancel)
    }

    @Test("hasRequestedCancel after a rejection that followed a request is false (A8)")
    func hasRequestedCancelAfterRejection() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        promise.requestCancel()
        resolver.reject(with: "late")
        #expect(!resolver.hasRequestedCancel)
    }

    @Test("hasRequestedCancel sees a request made on another thread (A8)")
    func hasRequestedCancelCrossThread() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let queue = makeTaggedQueue("resolver.crossThread")
        queue.async { promise.requestCancel() }
        await drain(queue)
        #expect(resolver.hasRequestedCancel)
        let seen = Recorder<Bool>()
        queue.async { seen.record(resolver.hasRequestedCancel) }
        await drain(queue)
        #expect(seen.values == [true])
    }

    @Test("hasRequestedCancel is true inside the handler body that observes the request (A8)")
    func hasRequestedCancelInsideCallback() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let seen = Recorder<Bool>()
        resolver.onRequestCancel(on: .immediate) { _ in seen.record(resolver.hasRequestedCancel) }
        promise.requestCancel()
        #expect(seen.values == [true])
    }

    @Test("PromiseCancellable requests cancellation while the promise lives and does nothing after (C4)")
    func cancellableRequestsCancel() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let cancellable = promise.cancellable
        cancellable.requestCancel()
        #expect(resolver.hasRequestedCancel)

        let dangling: PromiseCancellable = {
            let (promise, _) = IntPromise.makeWithResolver()
            return promise.cancellable
        }()
        dangling.requestCancel()
    }

    @Test("PromiseCancellable does not keep the promise alive (C4, §1.4)")
    func cancellableIsWeak() {
        let seen = Recorder<String>()
        let cancellable: PromiseCancellable = {
            let promise = IntPromise(on: .immediate) { _ in }
            promise.tap(on: .immediate) { seen.record(describe($0)) }
            return promise.cancellable
        }()
        #expect(seen.values == ["cancelled"], "the promise died although a cancellable still refers to it")
        cancellable.requestCancel()
    }

    // MARK: L1: handleCallback.

    @Test("handleCallback: a value fulfils even when an error is given too (L1)")
    func handleCallbackValueWins() {
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        resolver.handleCallback()(1, TestError.boom)
        #expect(describe(promise.result) == "value(1)")
    }

    @Test("handleCallback: an error rejects unless isCancelError says it means cancellation (L1)")
    func handleCallbackErrors() {
        let (rejected, rejectResolver) = StdPromise<Int>.makeWithResolver()
        rejectResolver.handleCallback()(nil, TestError.boom)
        #expect(describe(rejected.result) == "error(boom)")

        let (cancelled, cancelResolver) = StdPromise<Int>.makeWithResolver()
        cancelResolver.handleCallback(isCancelError: { ($0 as? TestError) == .boom })(nil, TestError.boom)
        #expect(describe(cancelled.result) == "cancelled")

        let (other, otherResolver) = StdPromise<Int>.makeWithResolver()
        otherResolver.handleCallback(isCancelError: { ($0 as? TestError) == .boom })(nil, TestError.other)
        #expect(describe(other.result) == "error(other)")
    }

    @Test("handleCallback: neither value nor error rejects with PromiseCallbackError.apiMismatch (L1)")
    func handleCallbackApiMismatch() {
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        resolver.handleCallback()(nil, nil)
        #expect((promise.result?.error as? PromiseCallbackError) == .apiMismatch)
    }

    // MARK: A3: dropped resolvers and storage lifetime.

    @Test("a dropped resolver leaves the promise pending while a handle exists (A3)")
    func droppedResolverWithLiveHandleStaysPending() {
        let promise = IntPromise(on: .immediate) { _ in }
        #expect(promise.result == nil)
        withExtendedLifetime(promise) {}
    }

    @Test("once the resolver and every handle are gone, the observers see .cancelled in registration order (A3)")
    func droppedResolverCancelsOnceStorageDies() async {
        let queue = makeTaggedQueue("resolver.dropped")
        let seen = Recorder<String>()
        do {
            let promise = IntPromise(on: .immediate) { _ in }
            for name in ["one", "two", "three"] {
                promise.tap(on: .queue(queue)) { seen.record("\(name) \(describe($0))") }
            }
            #expect(promise.result == nil)
        }
        await drain(queue)
        #expect(seen.values == ["one cancelled", "two cancelled", "three cancelled"])
    }

    @Test("a child does not keep its parent alive: dropping the parent cancels the child (A3)")
    func childDoesNotKeepParentAlive() {
        let child: Promise<Int, String> = {
            let parent = IntPromise(on: .immediate) { _ in }
            return parent.map(on: .immediate) { $0 + 1 }
        }()
        #expect(describe(child.result) == "cancelled")
    }

    @Test("an onRequestCancel closure that captures the resolver keeps the promise alive until it resolves (A3)")
    func onRequestCancelCapturingResolverKeepsPromiseAlive() {
        let seen = Recorder<String>()
        let cancellable: PromiseCancellable = {
            let promise = IntPromise(on: .immediate) { resolver in
                resolver.onRequestCancel(on: .immediate) { _ in resolver.cancel() }
            }
            promise.tap(on: .immediate) { seen.record(describe($0)) }
            return promise.cancellable
        }()
        #expect(seen.values.isEmpty)
        cancellable.requestCancel()
        #expect(seen.values == ["cancelled"])
    }

    // MARK: A4–A6: initialisers.

    @Test("already-resolved initialisers have their result at once (A4)")
    func alreadyResolvedInitialisers() {
        #expect(describe(IntPromise(fulfilled: 1).result) == "value(1)")
        #expect(describe(IntPromise(rejected: "no").result) == "error(no)")
        #expect(describe(IntPromise(with: .cancelled).result) == "cancelled")
        #expect(describe(IntPromise(with: .value(2)).result) == "value(2)")
    }

    @Test("makeWithResolver gives a pending promise (A6)")
    func makeWithResolverIsPending() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        #expect(promise.result == nil)
        resolver.fulfill(with: 1)
        #expect(promise.result == .value(1))
    }

    @Test("Promise(on: .immediate) runs its handler before init returns (A5)")
    func immediateHandlerRunsInline() {
        let ran = Recorder<String>()
        let promise = IntPromise(on: .immediate) { resolver in
            ran.record("handler")
            resolver.fulfill(with: 3)
        }
        ran.record("after init")
        #expect(ran.values == ["handler", "after init"])
        #expect(promise.result == .value(3))
    }

    @Test("Promise(on: .queue) runs its handler asynchronously on that queue, even when created there (A5)")
    func queueHandlerRunsAsynchronously() async {
        let queue = makeTaggedQueue("resolver.init")
        let ran = Recorder<String>()
        let made = Locked<IntPromise?>(nil)
        queue.async {
            made.value = IntPromise(on: .queue(queue)) { resolver in
                ran.record("handler on \(currentQueueTag ?? "-")")
                resolver.fulfill(with: 4)
            }
            ran.record("after init")
        }
        await drain(queue)
        await drain(queue)
        #expect(ran.values == ["after init", "handler on resolver.init"])
        let promise = made.value
        #expect(promise != nil, "the promise was not created")
        if let promise {
            let result = await waitForResult(promise)
            #expect(result == .value(4))
        }
    }

    @Test("a throwing handler rejects with the thrown error (A5)")
    func throwingHandlerRejects() {
        let promise = StdPromise<Int>(on: .immediate) { _ in throw TestError.thrown }
        #expect(describe(promise.result) == "error(thrown)")
    }

    @Test("a throw after the handler resolved the promise is ignored (A5)")
    func throwAfterResolutionIsIgnored() {
        let promise = StdPromise<Int>(on: .immediate) { resolver in
            resolver.fulfill(with: 1)
            throw TestError.thrown
        }
        #expect(describe(promise.result) == "value(1)")
    }
}
