import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Callbacks that re-enter the library while it dispatches (K2): registering on the promise
/// being resolved, requesting cancellation, invalidating tokens, resolving other promises.
@Suite("Re-entrant callbacks")
struct ReentrancyTests {
    typealias IntPromise = Promise<Int, String>

    @Test("a callback that registers on the promise being resolved sees it resolved: the new callback runs inline")
    func registerDuringResolution() {
        let order = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        promise.tap(on: .immediate) { _ in
            order.record("outer start")
            promise.tap(on: .immediate) { order.record("inner \(describe($0))") }
            order.record("outer end")
        }
        promise.tap(on: .immediate) { _ in order.record("second") }
        resolver.fulfill(with: 1)
        #expect(order.values == ["outer start", "inner value(1)", "outer end", "second"])
    }

    @Test("a callback that invalidates a token suppresses a later callback of the same resolution (E1, K2)")
    func invalidateDuringResolution() {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        promise.tap(on: .immediate) { _ in
            ran.record("first")
            token.invalidate()
        }
        let later = promise.map(on: .immediate, token: token) { value -> Int in
            ran.record("later")
            return value
        }
        resolver.fulfill(with: 1)
        #expect(ran.values == ["first"])
        #expect(later.result == .cancelled)
    }

    @Test("a callback may request cancellation and resolve other promises")
    func cancelAndResolveFromCallback() {
        let (first, firstResolver) = IntPromise.makeWithResolver()
        let (second, secondResolver) = IntPromise.makeWithResolver()
        secondResolver.onRequestCancel(on: .immediate) { $0.cancel() }
        first.tap(on: .immediate) { _ in
            first.requestCancel()
            second.requestCancel()
        }
        let chained = first.map(on: .immediate) { $0 + 1 }
        firstResolver.fulfill(with: 1)
        #expect(first.result == .value(1))
        #expect(second.result == .cancelled)
        #expect(chained.result == .value(2))
    }

    @Test("an onRequestCancel handler that registers another one sees it run at once (C3, K2)")
    func onRequestCancelFromHandler() {
        let order = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { handlerResolver in
            order.record("first")
            handlerResolver.onRequestCancel(on: .immediate) { _ in order.record("nested") }
            order.record("first end")
        }
        promise.requestCancel()
        #expect(order.values == ["first", "nested", "first end"])
    }

    @Test("a callback can chain on its own, just-resolved promise and resolve another promise with it")
    func resolveInsideCallback() {
        let (source, sourceResolver) = IntPromise.makeWithResolver()
        let (target, targetResolver) = IntPromise.makeWithResolver()
        source.tap(on: .immediate) { _ in targetResolver.resolve(with: source.map(on: .immediate) { $0 * 3 }) }
        sourceResolver.fulfill(with: 2)
        #expect(target.result == .value(6))
    }
}
