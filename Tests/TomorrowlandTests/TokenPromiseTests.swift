import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `TokenPromise` (E9): the token passed through, the `mapError` quirk, which wrappers are
/// "initial" and register their children for cancel-on-invalidate.
@Suite("TokenPromise")
struct TokenPromiseTests {
    typealias IntPromise = Promise<Int, String>

    static func callbackNodes(_ token: PromiseInvalidationToken) -> Int? {
        InvalidationTokenTests.callbackNodes(token)
    }

    @Test("withToken wraps the receiver itself and the token (E9)")
    func withTokenWrapsReceiver() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let promise = IntPromise(fulfilled: 1)
        let wrapped = promise.withToken(token)
        #expect(wrapped.inner == promise)
        #expect(wrapped.token == token)
        #expect(wrapped == TokenPromise(promise: promise, token: token))
        #expect(wrapped != promise.withToken(PromiseInvalidationToken(invalidateOnDeinit: false)))
        #expect(Self.callbackNodes(token) == 0, "the wrapped receiver itself is never registered")
    }

    @Test("wrapped callbacks are suppressed by invalidating the token; transform children are cancelled (E9)")
    func wrappedCallbacksUseTheToken() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let wrapped = promise.withToken(token)
        let then = wrapped.then(on: .immediate) { _ in ran.record("then") }
        let map = wrapped.map(on: .immediate) { value -> Int in
            ran.record("map"); return value
        }
        let always = wrapped.always(on: .immediate) { _ in ran.record("always") }
        let mapResult = wrapped.mapResult(
            on: .immediate,
            onComplete: { result -> PromiseResult<Int, String> in
                ran.record("mapResult"); return result
            })
        wrapped.tap(on: .immediate) { _ in ran.record("tap") }
        token.invalidate()
        resolver.fulfill(with: 1)
        #expect(ran.values.isEmpty)
        #expect(then.inner.result == .value(1))
        #expect(always.inner.result == .value(1))
        #expect(map.inner.result == .cancelled)
        #expect(mapResult.inner.result == .cancelled)
    }

    @Test("TokenPromise.mapError ignores the token: its callback is never suppressed (E9 quirk)")
    func mapErrorIgnoresToken() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let mapped = promise.withToken(token).mapError(on: .immediate) { error -> Int in
            ran.record(error)
            return error.count
        }
        token.invalidate()
        resolver.reject(with: "bad")
        #expect(ran.values == ["bad"])
        #expect(mapped.inner.result == .error(3))
    }

    @Test("children of the initial wrapper are registered for cancel-on-invalidate; grandchildren are not (E9)")
    func onlyDirectChildrenAreRegistered() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let (promise, _) = IntPromise.makeWithResolver()
        let child = promise.withToken(token).map(on: .immediate) { $0 + 1 }
        #expect(Self.callbackNodes(token) == 1)
        let grandchild = child.map(on: .immediate) { $0 + 1 }
        #expect(Self.callbackNodes(token) == 1)
        withExtendedLifetime((promise, child, grandchild)) {}
    }

    @Test("tap, tap() and ignoringCancel give non-initial wrappers; fork keeps the initial flag (E9)")
    func nonInitialWrappers() {
        let (promise, _) = IntPromise.makeWithResolver()
        let makers: [(TokenPromise<Int, String>) -> TokenPromise<Int, String>] = [
            { $0.tap(on: .immediate) { _ in } },
            { $0.tap() },
            { $0.ignoringCancel() },
        ]
        for make in makers {
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            let derived = make(promise.withToken(token))
            let child = derived.then(on: .immediate) { _ in }
            #expect(Self.callbackNodes(token) == 0)
            withExtendedLifetime(child) {}
        }
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let forked = promise.withToken(token).fork { _ in }
        let child = forked.then(on: .immediate) { _ in }
        #expect(Self.callbackNodes(token) == 1)
        withExtendedLifetime(child) {}
    }

    @Test("invalidation cancels the direct child, which propagates to the sealed parent; always is suppressed (E9)")
    func invalidationCancelsChainBackToParent() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (child, resolver, requests) = withSealedParent(IntPromise.self) { parent in
            parent.withToken(token).then(on: .immediate) { _ in ran.record("then") }.always(on: .immediate) { _ in
                ran.record("always")
            }
        }
        token.invalidate()
        #expect(requests.count == 1)
        resolver.cancel()
        #expect(ran.values.isEmpty)
        #expect(child.inner.result == .cancelled)
    }

    @Test("invalidating a token with no wrapped child does not cancel the wrapped promise (E9)")
    func invalidationWithoutChildDoesNothing() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let (wrapped, _, requests) = withSealedParent(IntPromise.self) { $0.withToken(token) }
        token.invalidate()
        #expect(requests.values.isEmpty)
        withExtendedLifetime(wrapped) {}
    }

    @Test("every TokenPromise method mirrors its Promise counterpart")
    func everyMethodMirrorsPromise() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let value = StdPromise<Int>(fulfilled: 2).withToken(token)
        let error = StdPromise<Int>(rejected: TestError.boom).withToken(token)
        let cancelled = StdPromise<Int>(with: .cancelled).withToken(token)
        let ran = Recorder<String>()
        #expect(value.then(on: .immediate) { _ in ran.record("then") }.inner.result?.value == 2)
        #expect(value.map(on: .immediate) { $0 + 1 }.inner.result?.value == 3)
        #expect(value.flatMap(on: .immediate) { StdPromise(fulfilled: $0 * 10) }.inner.result?.value == 20)
        #expect(value.tryThen(on: .immediate) { _ in ran.record("tryThen") }.inner.result?.value == 2)
        #expect(value.tryMap(on: .immediate) { $0 + 2 }.inner.result?.value == 4)
        #expect(
            value.tryFlatMap(on: .immediate) { Promise<Int, TestError>(fulfilled: $0 + 3) }.inner.result?.value == 5)
        error.catch(on: .immediate) { _ in ran.record("catch") }
        #expect(error.recover(on: .immediate) { _ in 6 }.inner.result?.value == 6)
        #expect(error.tryRecover(on: .immediate) { _ in 7 }.inner.result?.value == 7)
        #expect(describe(error.mapError(on: .immediate) { _ in "mapped" }.inner.result) == "error(mapped)")
        #expect(
            describe(error.flatMapError(on: .immediate) { _ in Promise<Int, String>(rejected: "flat") }.inner.result)
                == "error(flat)")
        #expect(describe(error.tryMapError(on: .immediate) { _ in TestError.other }.inner.result) == "error(other)")
        #expect(
            describe(error.tryFlatMapError(on: .immediate) { _ in Promise<Int, TestError>(fulfilled: 8) }.inner.result)
                == "value(8)")
        value.always(on: .immediate) { _ in ran.record("always") }
        #expect(describe(value.mapResult(on: .immediate, onComplete: { $0.map { $0 + 7 } }).inner.result) == "value(9)")
        #expect(
            describe(value.flatMapResult(on: .immediate) { StdPromise(with: $0.map { $0 + 8 }) }.inner.result)
                == "value(10)")
        #expect(
            describe(value.tryMapResult(on: .immediate) { _ in PromiseResult<Int, TestError>.value(11) }.inner.result)
                == "value(11)")
        #expect(
            describe(
                value.tryFlatMapResult(on: .immediate) { _ in Promise<Int, TestError>(fulfilled: 12) }.inner.result)
                == "value(12)")
        cancelled.onCancel(on: .immediate) { ran.record("onCancel") }
        value.tap(on: .immediate) { _ in ran.record("tap") }
        #expect(value.tap().inner.result?.value == 2)
        #expect(value.ignoringCancel().inner.result?.value == 2)
        #expect(ran.values == ["then", "tryThen", "catch", "always", "onCancel", "tap"])
    }
}
