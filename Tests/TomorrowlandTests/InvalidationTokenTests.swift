import Dispatch
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `PromiseInvalidationToken`: generations (E1–E4), cancel-on-invalidate (E5), pruning (E6),
/// chaining (E7), identity (E8) and the description format (§1.5).
@Suite("Invalidation tokens")
struct InvalidationTokenTests {
    typealias IntPromise = Promise<Int, String>

    /// The integer after `list=(` in a token's `debugDescription`, which must be followed by a
    /// space (`callbackLinkedList=(3 nodes)`), or `nil` if the text does not have that shape.
    static func nodeCount(_ list: String, in text: String) -> Int? {
        guard let range = text.range(of: "\(list)=(") else { return nil }
        let tail = text[range.upperBound...]
        let digits = tail.prefix { $0.isNumber }
        guard !digits.isEmpty, tail.dropFirst(digits.count).hasPrefix(" ") else { return nil }
        return Int(digits)
    }

    static func callbackNodes(_ token: PromiseInvalidationToken) -> Int? {
        nodeCount("callbackLinkedList", in: token.debugDescription)
    }

    static func chainNodes(_ token: PromiseInvalidationToken) -> Int? {
        nodeCount("tokenChainLinkedList", in: token.debugDescription)
    }

    /// A pending promise that records each cancel request it gets.
    static func requestRecordingPromise(_ requests: Recorder<String>, name: String) -> (IntPromise, IntPromise.Resolver)
    {
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { _ in requests.record(name) }
        return (promise, resolver)
    }

    // MARK: E1–E3: generations

    @Test("invalidation suppresses callbacks registered before it, and the token can be reused after (E1)")
    func generationIsCapturedAtRegistration() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let before = promise.then(on: .immediate, token: token) { _ in ran.record("before") }
        token.invalidate()
        let after = promise.then(on: .immediate, token: token) { _ in ran.record("after") }
        resolver.fulfill(with: 1)
        #expect(ran.values == ["after"])
        #expect(before.result == .value(1))
        #expect(after.result == .value(1))
    }

    @Test("invalidating before registering on a resolved promise does not suppress the callback (E1)")
    func invalidationBeforeRegistrationHasNoEffect() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        token.invalidate()
        let child = IntPromise(fulfilled: 1).map(on: .immediate, token: token) { $0 + 1 }
        #expect(child.result == .value(2))
    }

    @Test("the generation is checked when the callback is about to run on its context (E1)")
    func generationIsCheckedOnTheContext() async {
        let queue = makeTaggedQueue("token.check")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let child = IntPromise(fulfilled: 1).map(on: .queue(queue), token: token) { value -> Int in
            ran.record("ran")
            return value
        }
        token.invalidate()
        gate.signal()
        #expect(await waitForResult(child) == .cancelled)
        #expect(ran.values.isEmpty)
    }

    @Test("one token guards callbacks on several promises; callbacks without it are unaffected (E3)")
    func oneTokenGuardsManyCallbacks() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (first, firstResolver) = IntPromise.makeWithResolver()
        let (second, secondResolver) = IntPromise.makeWithResolver()
        _ = first.then(on: .immediate, token: token) { _ in ran.record("first guarded") }
        _ = second.then(on: .immediate, token: token) { _ in ran.record("second guarded") }
        _ = second.then(on: .immediate) { _ in ran.record("second free") }
        token.invalidate()
        firstResolver.fulfill(with: 1)
        secondResolver.fulfill(with: 2)
        #expect(ran.values == ["second free"])
    }

    // MARK: E4: callbacks do not keep the token's owner alive

    @Test("a token dropped while its callbacks are pending invalidates itself and suppresses them (E4)")
    func droppedTokenSuppressesPendingCallbacks() {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let (observer, mapped): (IntPromise, IntPromise) = {
            let token = PromiseInvalidationToken()
            return (
                promise.then(on: .immediate, token: token) { _ in ran.record("then") },
                promise.map(on: .immediate, token: token) { value -> Int in
                    ran.record("map"); return value
                }
            )
        }()
        resolver.fulfill(with: 1)
        #expect(ran.values.isEmpty)
        #expect(observer.result == .value(1))
        #expect(mapped.result == .cancelled)
    }

    @Test("a token with invalidateOnDeinit: false dropped while its callbacks are pending lets them run (E4, E5)")
    func droppedTokenWithoutInvalidateOnDeinit() {
        let ran = Recorder<String>()
        let requests = Recorder<String>()
        let (promise, resolver) = Self.requestRecordingPromise(requests, name: "promise")
        let child: IntPromise = {
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            token.requestCancelOnInvalidate(promise)
            return promise.then(on: .immediate, token: token) { _ in ran.record("then") }
        }()
        #expect(requests.values.isEmpty)
        resolver.fulfill(with: 1)
        #expect(ran.values == ["then"])
        #expect(child.result == .value(1))
    }

    // MARK: E5: requestCancelOnInvalidate

    @Test("invalidate requests cancellation of every registered promise, in registration order (E5)")
    func invalidateRequestsCancelInOrder() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let requests = Recorder<String>()
        let promises = (0..<3).map { Self.requestRecordingPromise(requests, name: "p\($0)") }
        for (promise, _) in promises { token.requestCancelOnInvalidate(promise) }
        #expect(Self.callbackNodes(token) == 3)
        token.invalidate()
        #expect(requests.values == ["p0", "p1", "p2"])
        #expect(Self.callbackNodes(token) == 0, "registrations are used up by an invalidation")
    }

    @Test("invalidate bumps the generation before it requests cancellation (E5)")
    func invalidateBumpsGenerationFirst() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        // The cancel handler fulfils instead: the callback registered with the token must still
        // see the new generation, because the request comes after the bump.
        resolver.onRequestCancel(on: .immediate) { $0.fulfill(with: 1) }
        let child = promise.map(on: .immediate, token: token) { value -> Int in
            ran.record("callback")
            return value
        }
        token.requestCancelOnInvalidate(promise)
        token.invalidate()
        #expect(promise.result == .value(1))
        #expect(ran.values.isEmpty)
        #expect(child.result == .cancelled)
    }

    @Test("Promise.requestCancelOnInvalidate registers the receiver and returns it (E5)")
    func promiseRequestCancelOnInvalidate() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "promise")
        #expect(promise.requestCancelOnInvalidate(token) == promise)
        token.invalidate()
        #expect(requests.values == ["promise"])
    }

    @Test("cancelWithoutInvalidating requests cancellation but leaves token callbacks able to run (E5)")
    func cancelWithoutInvalidating() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { $0.cancel() }
        promise.onCancel(on: .immediate, token: token) { ran.record("onCancel") }
        promise.always(on: .immediate, token: token) { ran.record("always \(describe($0))") }
        token.requestCancelOnInvalidate(promise)
        token.cancelWithoutInvalidating()
        #expect(ran.values == ["onCancel", "always cancelled"])
        #expect(Self.callbackNodes(token) == 0)
    }

    @Test("requestCancelOnInvalidate holds the promise weakly (E5)")
    func requestCancelOnInvalidateIsWeak() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let seen = Recorder<String>()
        do {
            let promise = IntPromise(on: .immediate) { _ in }
            promise.tap(on: .immediate) { seen.record(describe($0)) }
            token.requestCancelOnInvalidate(promise)
        }
        #expect(seen.values == ["cancelled"], "the promise died (and was cancelled) although the token still lists it")
        token.invalidate()
    }

    @Test("dropping a token that invalidates on deinit cancels its registered promises (E5)")
    func droppedTokenCancelsRegisteredPromises() {
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "promise")
        do {
            let token = PromiseInvalidationToken()
            token.requestCancelOnInvalidate(promise)
        }
        #expect(requests.values == ["promise"])
    }

    @Test("dropping a token with invalidateOnDeinit: false cancels nothing (E5)")
    func droppedTokenWithoutInvalidateOnDeinitCancelsNothing() {
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "promise")
        do {
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            token.requestCancelOnInvalidate(promise)
        }
        #expect(requests.values.isEmpty)
        withExtendedLifetime(promise) {}
    }

    // MARK: E6: pruning at the head

    @Test("100 registrations of short-lived promises leave one node (E6)")
    func pruningShortLivedPromises() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        for _ in 0..<100 {
            let (promise, _) = IntPromise.makeWithResolver()
            token.requestCancelOnInvalidate(promise)
        }
        #expect(Self.callbackNodes(token) == 1)
    }

    @Test("50 short-lived, one kept alive, then 50 more leave two nodes: pruning stops at a live node (E6)")
    func pruningStopsAtFirstLiveNode() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        for _ in 0..<50 {
            let (promise, _) = IntPromise.makeWithResolver()
            token.requestCancelOnInvalidate(promise)
        }
        let (kept, _) = IntPromise.makeWithResolver()
        token.requestCancelOnInvalidate(kept)
        for _ in 0..<50 {
            let (promise, _) = IntPromise.makeWithResolver()
            token.requestCancelOnInvalidate(promise)
        }
        #expect(Self.callbackNodes(token) == 2)
        withExtendedLifetime(kept) {}
    }

    @Test("100 live registrations leave 100 nodes; once they die, one more registration leaves one (E6)")
    func pruningAfterEveryPromiseDies() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        var alive: [IntPromise] = []
        for _ in 0..<100 {
            let (promise, _) = IntPromise.makeWithResolver()
            alive.append(promise)
            token.requestCancelOnInvalidate(promise)
        }
        #expect(Self.callbackNodes(token) == 100)
        alive.removeAll()
        let (last, _) = IntPromise.makeWithResolver()
        token.requestCancelOnInvalidate(last)
        #expect(Self.callbackNodes(token) == 1)
        withExtendedLifetime(last) {}
    }

    @Test("a reused token's list does not grow: register, resolve, repeat 1000 times (issue 6)")
    func reusedTokenDoesNotGrow() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        for round in 0..<1000 {
            let (promise, resolver) = IntPromise.makeWithResolver()
            token.requestCancelOnInvalidate(promise)
            _ = promise.then(on: .immediate, token: token) { _ in }
            resolver.fulfill(with: round)
        }
        #expect((Self.callbackNodes(token) ?? .max) <= 1)
    }

    // MARK: E7: chaining

    @Test("a chained child is invalidated by every later invalidation of its parent (E7)")
    func chainedChildIsInvalidatedEachTime() {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        let child = PromiseInvalidationToken(invalidateOnDeinit: false)
        child.chainInvalidation(from: parent)
        let ran = Recorder<String>()
        for round in 0..<3 {
            let (promise, resolver) = IntPromise.makeWithResolver()
            _ = promise.then(on: .immediate, token: child) { _ in ran.record("suppressed \(round)") }
            parent.invalidate()
            _ = promise.then(on: .immediate, token: child) { _ in ran.record("runs \(round)") }
            resolver.fulfill(with: round)
        }
        #expect(ran.values == ["runs 0", "runs 1", "runs 2"])
    }

    @Test("a parent's invalidation cancels the chained child's registered promises (E7)")
    func chainedInvalidationCancelsChildPromises() {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        let child = PromiseInvalidationToken(invalidateOnDeinit: false)
        child.chainInvalidation(from: parent)
        let requests = Recorder<String>()
        let (parentPromise, _) = Self.requestRecordingPromise(requests, name: "parent's")
        let (childPromise, _) = Self.requestRecordingPromise(requests, name: "child's")
        child.requestCancelOnInvalidate(childPromise)
        parent.requestCancelOnInvalidate(parentPromise)
        parent.invalidate()
        #expect(requests.values == ["parent's", "child's"], "the parent handles its own registrations first")
    }

    @Test(
        "cancelWithoutInvalidating is forwarded along a chain unless the chain opted out (E7)",
        arguments: [true, false])
    func chainedCancelWithoutInvalidating(including: Bool) {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        let child = PromiseInvalidationToken(invalidateOnDeinit: false)
        child.chainInvalidation(from: parent, includingCancelWithoutInvalidating: including)
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "child's")
        child.requestCancelOnInvalidate(promise)
        parent.cancelWithoutInvalidating()
        #expect(requests.values == (including ? ["child's"] : []))
        parent.invalidate()
        #expect(requests.values == ["child's"])
    }

    @Test("the default of includingCancelWithoutInvalidating is true (E7)")
    func chainDefaultForwardsCancelWithoutInvalidating() {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        let child = PromiseInvalidationToken(invalidateOnDeinit: false)
        child.chainInvalidation(from: parent)
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "child's")
        child.requestCancelOnInvalidate(promise)
        parent.cancelWithoutInvalidating()
        #expect(requests.values == ["child's"])
    }

    @Test("a token chained while its parent is invalidating is not invalidated in that round (E7)")
    func chainSnapshotIsTakenBeforeCallingOut() {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        let late = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (observed, observedResolver) = IntPromise.makeWithResolver()
        _ = observed.then(on: .immediate, token: late) { _ in ran.record("late token's callback") }
        let (registered, registeredResolver) = IntPromise.makeWithResolver()
        registeredResolver.onRequestCancel(on: .immediate) { _ in late.chainInvalidation(from: parent) }
        parent.requestCancelOnInvalidate(registered)
        parent.invalidate()
        observedResolver.fulfill(with: 1)
        #expect(ran.values == ["late token's callback"], "the chain list was read before calling out")
        let (next, nextResolver) = IntPromise.makeWithResolver()
        _ = next.then(on: .immediate, token: late) { _ in ran.record("suppressed") }
        parent.invalidate()
        nextResolver.fulfill(with: 2)
        #expect(ran.values == ["late token's callback"], "later invalidations do reach it")
        withExtendedLifetime(registered) {}
    }

    @Test("chaining does not retain the child: it can still invalidate on deinit (E7)")
    func chainDoesNotRetainChild() {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "child's")
        do {
            let child = PromiseInvalidationToken()
            child.chainInvalidation(from: parent)
            child.requestCancelOnInvalidate(promise)
        }
        #expect(requests.values == ["child's"])
        withExtendedLifetime(parent) {}
    }

    @Test("chaining does not retain the parent: it can still invalidate on deinit (E7)")
    func chainDoesNotRetainParent() {
        let child = PromiseInvalidationToken(invalidateOnDeinit: false)
        let requests = Recorder<String>()
        let (promise, _) = Self.requestRecordingPromise(requests, name: "parent's")
        do {
            let parent = PromiseInvalidationToken()
            child.chainInvalidation(from: parent)
            parent.requestCancelOnInvalidate(promise)
        }
        #expect(requests.values == ["parent's"])
        withExtendedLifetime(child) {}
    }

    @Test("chaining a token to itself is ignored (E7)")
    func selfChainIsIgnored() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        token.chainInvalidation(from: token)
        #expect(Self.chainNodes(token) == 0)
        token.invalidate()
        token.cancelWithoutInvalidating()
    }

    @Test("the chain list is pruned at the head like the callback list (E7)")
    func chainListIsPruned() {
        let parent = PromiseInvalidationToken(invalidateOnDeinit: false)
        for _ in 0..<100 {
            let child = PromiseInvalidationToken(invalidateOnDeinit: false)
            child.chainInvalidation(from: parent)
        }
        #expect(Self.chainNodes(parent) == 1)
    }

    // MARK: E8 and descriptions

    @Test("tokens are equal and hash equal iff they are copies of one token (E8)")
    func tokenIdentity() {
        let token = PromiseInvalidationToken()
        let copy = token
        let other = PromiseInvalidationToken()
        #expect(token == copy)
        #expect(token != other)
        #expect(token.hashValue == copy.hashValue)
        let set: Set<PromiseInvalidationToken> = [token, copy, other]
        #expect(set.count == 2)
    }

    @Test("description and debugDescription have the documented shape (§1.5)")
    func descriptions() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        #expect(token.description.hasPrefix("<PromiseInvalidationToken: "))
        #expect(token.description.hasSuffix(">"))
        let debug = token.debugDescription
        #expect(debug.contains("generation="))
        #expect(Self.callbackNodes(token) == 0)
        #expect(Self.chainNodes(token) == 0)
        let (promise, _) = IntPromise.makeWithResolver()
        token.requestCancelOnInvalidate(promise)
        #expect(token.debugDescription.contains("callbackLinkedList=(1 node"))
        withExtendedLifetime(promise) {}
    }

    @Test("a token invalidated from another thread suppresses a callback registered here (K1)")
    func crossThreadInvalidation() async {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let (promise, resolver) = IntPromise.makeWithResolver()
        let child = promise.map(on: .immediate, token: token) { $0 }
        let queue = makeTaggedQueue("token.other")
        queue.async { token.invalidate() }
        await drain(queue)
        resolver.fulfill(with: 1)
        #expect(child.result == .cancelled)
    }
}
