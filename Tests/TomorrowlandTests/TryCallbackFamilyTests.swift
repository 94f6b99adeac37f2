import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// The `try…` families: the outcome table for the `Error == Swift.Error` ones, and "a throw
/// rejects with the thrown error" for every throwing callback (the callback outcome table in
/// Tomorrowland.docc/BehaviourRules.md).
@Suite("Callback families: throwing variants")
struct TryCallbackFamilyTests {
    // MARK: Outcome table for the Error == Swift.Error families.

    @Test(
        "tryThen runs only on a value and passes every outcome through", arguments: Outcome.allCases, TokenUse.allCases)
    func tryThen(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<Int>()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        let token = tokenUse.makeToken()
        let child = promise.tryThen(on: .immediate, token: token) { ran.record($0) }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (outcome == .value && tokenUse.allowsCallback ? [42] : []))
        // tryThen is observer-style: an invalidated token still fulfils with the value (E2).
        #expect(describe(child.result) == passedThroughStd(outcome))
    }

    @Test("tryMap fulfils with the callback's value", arguments: Outcome.allCases, TokenUse.allCases)
    func tryMap(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<Int>()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: StdPromise<String> = promise.tryMap(on: .immediate, token: token) { value in
            ran.record(value)
            return "mapped \(value)"
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .value
        #expect(ran.values == (applies && tokenUse.allowsCallback ? [42] : []))
        let expected =
            applies ? (tokenUse.allowsCallback ? "value(mapped 42)" : "cancelled") : passedThroughStd(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test(
        "tryFlatMap adopts the callback's promise, upcasting its error", arguments: Outcome.allCases, TokenUse.allCases)
    func tryFlatMap(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<Int>()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: StdPromise<String> = promise.tryFlatMap(on: .immediate, token: token) { value in
            ran.record(value)
            return Promise<String, TestError>(rejected: .other)
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .value
        #expect(ran.values == (applies && tokenUse.allowsCallback ? [42] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "error(other)" : "cancelled") : passedThroughStd(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test("tryRecover fulfils with the callback's value on an error", arguments: Outcome.allCases, TokenUse.allCases)
    func tryRecover(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: StdPromise<Int> = promise.tryRecover(on: .immediate, token: token) { error in
            ran.record("\(error)")
            return 7
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .error
        #expect(ran.values == (applies && tokenUse.allowsCallback ? ["boom"] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "value(7)" : "cancelled") : passedThroughStd(outcome)
        #expect(describe(child.result) == expected)
    }

    // MARK: A throw rejects with the thrown error.

    @Test("tryThen rejects with the thrown error")
    func tryThenThrowRejects() {
        let child = StdPromise<Int>(fulfilled: 1).tryThen(on: .immediate) { _ in throw TestError.thrown }
        #expect(describe(child.result) == "error(thrown)")
    }

    @Test("tryMap and tryFlatMap reject with the thrown error")
    func tryMapAndTryFlatMapThrowRejects() {
        let promise = StdPromise<Int>(fulfilled: 1)
        let mapped: StdPromise<Int> = promise.tryMap(on: .immediate) { _ in throw TestError.thrown }
        let flatMapped: StdPromise<Int> = promise.tryFlatMap(on: .immediate) { _ -> Promise<Int, TestError> in
            throw TestError.thrown
        }
        #expect(describe(mapped.result) == "error(thrown)")
        #expect(describe(flatMapped.result) == "error(thrown)")
    }

    @Test("tryFlatMap adopts a fulfilled inner promise")
    func tryFlatMapAdoptsValue() {
        let child = StdPromise<Int>(fulfilled: 2).tryFlatMap(on: .immediate) {
            Promise<Int, TestError>(fulfilled: $0 * 10)
        }
        #expect(describe(child.result) == "value(20)")
    }

    @Test("tryRecover rejects with the thrown error")
    func tryRecoverThrowRejects() {
        let child = StdPromise<Int>(rejected: TestError.boom).tryRecover(on: .immediate) { _ in throw TestError.thrown }
        #expect(describe(child.result) == "error(thrown)")
    }

    @Test("tryMapError and tryFlatMapError reject with the thrown error")
    func tryMapErrorThrowRejects() {
        let promise = Promise<Int, String>(rejected: "bad")
        let mapped = promise.tryMapError(on: .immediate) { _ -> TestError in throw TestError.thrown }
        let flatMapped = promise.tryFlatMapError(on: .immediate) { _ -> Promise<Int, TestError> in
            throw TestError.thrown
        }
        #expect(describe(mapped.result) == "error(thrown)")
        #expect(describe(flatMapped.result) == "error(thrown)")
    }

    @Test("tryFlatMapError adopts a fulfilled inner promise")
    func tryFlatMapErrorAdoptsValue() {
        let child = Promise<Int, String>(rejected: "bad").tryFlatMapError(on: .immediate) {
            Promise<Int, TestError>(fulfilled: $0.count)
        }
        #expect(describe(child.result) == "value(3)")
    }

    @Test(
        "tryMapResult and tryFlatMapResult reject with the thrown error on every outcome", arguments: Outcome.allCases)
    func tryResultFamiliesThrowRejects(outcome: Outcome) {
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        let mapped = promise.tryMapResult(on: .immediate) { _ -> PromiseResult<Int, TestError> in throw TestError.thrown
        }
        let flatMapped = promise.tryFlatMapResult(on: .immediate) { _ -> Promise<Int, TestError> in
            throw TestError.thrown
        }
        resolver.settle(outcome)
        #expect(describe(mapped.result) == "error(thrown)")
        #expect(describe(flatMapped.result) == "error(thrown)")
    }

    // MARK: Upcasts and Result.

    @Test("upcast turns a typed Swift.Error into Swift.Error and keeps values and cancellation")
    func upcastOfTypedError() {
        #expect(describe(Promise<Int, TestError>(rejected: .boom).upcast.result) == "error(boom)")
        #expect(describe(Promise<Int, TestError>(fulfilled: 3).upcast.result) == "value(3)")
        #expect(describe(Promise<Int, TestError>(with: .cancelled).upcast.result) == "cancelled")
        let (pending, resolver) = Promise<Int, TestError>.makeWithResolver()
        let upcast: StdPromise<Int> = pending.upcast
        #expect(upcast.result == nil)
        resolver.reject(with: .other)
        #expect(describe(upcast.result) == "error(other)")
    }

    @Test("upcast of a NoError promise keeps the value")
    func upcastOfNoError() {
        let (pending, resolver) = Promise<Int, NoError>.makeWithResolver()
        let upcast: StdPromise<Int> = pending.upcast
        resolver.fulfill(with: 9)
        #expect(describe(upcast.result) == "value(9)")
    }

    @Test("Promise(with: Result) and resolve(with: Result) map success to value and failure to error")
    func swiftResultConveniences() {
        #expect(describe(Promise<Int, TestError>(with: Result.success(1)).result) == "value(1)")
        #expect(describe(Promise<Int, TestError>(with: Result.failure(.boom)).result) == "error(boom)")
        let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
        resolver.resolve(with: Result<Int, TestError>.failure(.other))
        #expect(describe(promise.result) == "error(other)")
    }
}
