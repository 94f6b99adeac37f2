import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Every callback family against the three outcomes, with no token, a valid token, and a token
/// invalidated between registration and resolution (the callback outcome
/// table and E1/E2 in Tomorrowland.docc/BehaviourRules.md).
///
/// All callbacks use `.immediate` and the promise is still pending at registration, so each
/// callback runs (or not) synchronously inside `settle`, on the resolving thread.
@Suite("Callback families: outcome table")
struct CallbackFamilyTests {
    typealias IntPromise = Promise<Int, String>

    // MARK: Observer family: the callback is skipped when invalidated, the result passes on.

    @Test("then runs only on a value and passes every outcome through", arguments: Outcome.allCases, TokenUse.allCases)
    func then(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child = promise.then(on: .immediate, token: token) { ran.record("value \($0)") }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (outcome == .value && tokenUse.allowsCallback ? ["value 42"] : []))
        #expect(describe(child.result) == passedThrough(outcome))
    }

    @Test(
        "catch runs only on an error and passes every outcome through", arguments: Outcome.allCases, TokenUse.allCases)
    func catchFamily(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child = promise.catch(on: .immediate, token: token) { ran.record("error \($0)") }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (outcome == .error && tokenUse.allowsCallback ? ["error bad"] : []))
        #expect(describe(child.result) == passedThrough(outcome))
    }

    @Test("always runs on every outcome and passes it through", arguments: Outcome.allCases, TokenUse.allCases)
    func always(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child = promise.always(on: .immediate, token: token) { ran.record(describe($0)) }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (tokenUse.allowsCallback ? [passedThrough(outcome)] : []))
        #expect(describe(child.result) == passedThrough(outcome))
    }

    @Test(
        "onCancel runs only on cancellation and passes every outcome through", arguments: Outcome.allCases,
        TokenUse.allCases)
    func onCancel(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child = promise.onCancel(on: .immediate, token: token) { ran.record("cancelled") }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (outcome == .cancelled && tokenUse.allowsCallback ? ["cancelled"] : []))
        #expect(describe(child.result) == passedThrough(outcome))
    }

    @Test(
        "tap(on:) runs on every outcome and returns the receiver itself", arguments: Outcome.allCases, TokenUse.allCases
    )
    func tapOn(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let returned = promise.tap(on: .immediate, token: token) { ran.record(describe($0)) }
        #expect(returned == promise)
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (tokenUse.allowsCallback ? [passedThrough(outcome)] : []))
        #expect(describe(returned.result) == passedThrough(outcome))
    }

    @Test("tap() returns a new promise that adopts every outcome", arguments: Outcome.allCases)
    func tapWithoutCallback(outcome: Outcome) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let tapped = promise.tap()
        #expect(tapped != promise)
        #expect(tapped.result == nil)
        resolver.settle(outcome)
        #expect(describe(tapped.result) == passedThrough(outcome))
    }

    // MARK: Transform family: an invalidated token cancels the child when the callback applies.

    @Test(
        "map fulfils with the callback's value and passes errors and cancellation", arguments: Outcome.allCases,
        TokenUse.allCases)
    func map(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<Int>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<String, String> = promise.map(on: .immediate, token: token) { value in
            ran.record(value)
            return "mapped \(value)"
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .value
        #expect(ran.values == (applies && tokenUse.allowsCallback ? [42] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "value(mapped 42)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test(
        "flatMap adopts the callback's promise and passes errors and cancellation", arguments: Outcome.allCases,
        TokenUse.allCases)
    func flatMap(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<Int>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<String, String> = promise.flatMap(on: .immediate, token: token) { value in
            ran.record(value)
            return Promise(fulfilled: "inner \(value)")
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .value
        #expect(ran.values == (applies && tokenUse.allowsCallback ? [42] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "value(inner 42)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test("recover fulfils with the callback's value on an error", arguments: Outcome.allCases, TokenUse.allCases)
    func recover(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<Int, NoError> = promise.recover(on: .immediate, token: token) { error in
            ran.record(error)
            return error.count
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .error
        #expect(ran.values == (applies && tokenUse.allowsCallback ? ["bad"] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "value(3)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test("mapError rejects with the callback's error", arguments: Outcome.allCases, TokenUse.allCases)
    func mapError(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<Int, Int> = promise.mapError(on: .immediate, token: token) { error in
            ran.record(error)
            return error.count
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .error
        #expect(ran.values == (applies && tokenUse.allowsCallback ? ["bad"] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "error(3)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test("flatMapError adopts the callback's promise on an error", arguments: Outcome.allCases, TokenUse.allCases)
    func flatMapError(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<Int, Int> = promise.flatMapError(on: .immediate, token: token) { error in
            ran.record(error)
            return Promise(rejected: error.count + 100)
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .error
        #expect(ran.values == (applies && tokenUse.allowsCallback ? ["bad"] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "error(103)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test("tryMapError rejects with the returned Swift.Error", arguments: Outcome.allCases, TokenUse.allCases)
    func tryMapError(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<Int, Swift.Error> = promise.tryMapError(on: .immediate, token: token) { error -> TestError in
            ran.record(error)
            return TestError.other
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .error
        #expect(ran.values == (applies && tokenUse.allowsCallback ? ["bad"] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "error(other)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    @Test(
        "tryFlatMapError adopts the returned promise, upcasting its error", arguments: Outcome.allCases,
        TokenUse.allCases)
    func tryFlatMapError(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<Int, Swift.Error> = promise.tryFlatMapError(on: .immediate, token: token) { error in
            ran.record(error)
            return Promise<Int, TestError>(rejected: .other)
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        let applies = outcome == .error
        #expect(ran.values == (applies && tokenUse.allowsCallback ? ["bad"] : []))
        let expected = applies ? (tokenUse.allowsCallback ? "error(other)" : "cancelled") : passedThrough(outcome)
        #expect(describe(child.result) == expected)
    }

    /// The mapping the `*Result` tests use: every outcome becomes something else, so that the
    /// child's result proves the callback's return value was used.
    static func remap(_ result: PromiseResult<Int, String>) -> PromiseResult<String, Int> {
        switch result {
        case .value(let value): .value("got \(value)")
        case .error(let error): .error(error.count)
        case .cancelled: .value("was cancelled")
        }
    }

    static func remapped(_ outcome: Outcome) -> String {
        switch outcome {
        case .value: "value(got 42)"
        case .error: "error(3)"
        case .cancelled: "value(was cancelled)"
        }
    }

    @Test(
        "mapResult resolves with the callback's result on every outcome", arguments: Outcome.allCases, TokenUse.allCases
    )
    func mapResult(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<String, Int> = promise.mapResult(on: .immediate, token: token) { result in
            ran.record(describe(result))
            return Self.remap(result)
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (tokenUse.allowsCallback ? [passedThrough(outcome)] : []))
        #expect(describe(child.result) == (tokenUse.allowsCallback ? Self.remapped(outcome) : "cancelled"))
    }

    @Test(
        "flatMapResult adopts the callback's promise on every outcome", arguments: Outcome.allCases, TokenUse.allCases)
    func flatMapResult(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<String, Int> = promise.flatMapResult(on: .immediate, token: token) { result in
            ran.record(describe(result))
            return Promise(with: Self.remap(result))
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (tokenUse.allowsCallback ? [passedThrough(outcome)] : []))
        #expect(describe(child.result) == (tokenUse.allowsCallback ? Self.remapped(outcome) : "cancelled"))
    }

    @Test(
        "tryMapResult resolves with the callback's result, upcasting its error", arguments: Outcome.allCases,
        TokenUse.allCases)
    func tryMapResult(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<String, Swift.Error> = promise.tryMapResult(on: .immediate, token: token) {
            result -> PromiseResult<String, TestError> in
            ran.record(describe(result))
            return result.value.map { .value("got \($0)") } ?? .error(.other)
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (tokenUse.allowsCallback ? [passedThrough(outcome)] : []))
        let expected = outcome == .value ? "value(got 42)" : "error(other)"
        #expect(describe(child.result) == (tokenUse.allowsCallback ? expected : "cancelled"))
    }

    @Test(
        "tryFlatMapResult adopts the callback's promise, upcasting its error", arguments: Outcome.allCases,
        TokenUse.allCases)
    func tryFlatMapResult(outcome: Outcome, tokenUse: TokenUse) {
        let ran = Recorder<String>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        let token = tokenUse.makeToken()
        let child: Promise<String, Swift.Error> = promise.tryFlatMapResult(on: .immediate, token: token) { result in
            ran.record(describe(result))
            return Promise<String, TestError>(with: result.value.map { .value("got \($0)") } ?? .error(.other))
        }
        tokenUse.applyBeforeResolution(token)
        resolver.settle(outcome)
        #expect(ran.values == (tokenUse.allowsCallback ? [passedThrough(outcome)] : []))
        let expected = outcome == .value ? "value(got 42)" : "error(other)"
        #expect(describe(child.result) == (tokenUse.allowsCallback ? expected : "cancelled"))
    }

    // MARK: The same table with an already-resolved receiver (synchronous trigger).

    @Test(
        "on an already-resolved receiver, .immediate callbacks run before registration returns",
        arguments: Outcome.allCases)
    func alreadyResolvedReceiverRunsCallbacksInline(outcome: Outcome) {
        let ran = Recorder<String>()
        let promise: IntPromise =
            switch outcome {
            case .value: Promise(fulfilled: 42)
            case .error: Promise(rejected: "bad")
            case .cancelled: Promise(with: .cancelled)
            }
        #expect(describe(promise.result) == passedThrough(outcome))
        let mapped = promise.map(on: .immediate) { $0 + 1 }
        let recovered = promise.recover(on: .immediate) { $0.count }
        let always = promise.always(on: .immediate) { ran.record("always \(describe($0))") }
        let cancelled = promise.onCancel(on: .immediate) { ran.record("onCancel") }
        let remapped = promise.mapResult(on: .immediate) { Self.remap($0) }
        #expect(ran.values == ["always \(passedThrough(outcome))"] + (outcome == .cancelled ? ["onCancel"] : []))
        #expect(describe(mapped.result) == (outcome == .value ? "value(43)" : passedThrough(outcome)))
        #expect(describe(recovered.result) == (outcome == .error ? "value(3)" : passedThrough(outcome)))
        #expect(describe(always.result) == passedThrough(outcome))
        #expect(describe(cancelled.result) == passedThrough(outcome))
        #expect(describe(remapped.result) == Self.remapped(outcome))
    }

    // MARK: Nested promises returned by the flatMap family.

    @Test("flatMap's child waits for a pending inner promise and adopts its result", arguments: Outcome.allCases)
    func flatMapWaitsForPendingInnerPromise(outcome: Outcome) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let (inner, innerResolver) = Promise<String, String>.makeWithResolver()
        let child = promise.flatMap(on: .immediate) { _ in inner }
        resolver.fulfill(with: 1)
        #expect(child.result == nil)
        switch outcome {
        case .value: innerResolver.fulfill(with: "late")
        case .error: innerResolver.reject(with: "inner failed")
        case .cancelled: innerResolver.cancel()
        }
        let expected = ["value": "value(late)", "error": "error(inner failed)", "cancelled": "cancelled"][
            outcome.rawValue]
        #expect(describe(child.result) == expected)
    }

    @Test("flatMapResult and flatMapError wait for a pending inner promise")
    func flatMapResultAndFlatMapErrorWaitForInnerPromise() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let (inner, innerResolver) = Promise<Int, Int>.makeWithResolver()
        let viaError = promise.flatMapError(on: .immediate) { _ in inner }
        let viaResult = promise.flatMapResult(on: .immediate) { _ in inner }
        resolver.reject(with: "bad")
        #expect(viaError.result == nil)
        #expect(viaResult.result == nil)
        innerResolver.fulfill(with: 7)
        #expect(describe(viaError.result) == "value(7)")
        #expect(describe(viaResult.result) == "value(7)")
    }

    // MARK: B9: every registration returns a distinct promise, except tap(on:), fork and
    // requestCancelOnInvalidate.

    @Test("every callback method returns a new promise, distinct from the receiver and each other")
    func everyMethodReturnsADistinctPromise() {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let children: [IntPromise] = [
            promise.then(on: .immediate) { _ in },
            promise.catch(on: .immediate) { _ in },
            promise.always(on: .immediate) { _ in },
            promise.onCancel(on: .immediate) {},
            promise.tap(),
            promise.makeChild(),
            promise.ignoringCancel(),
            promise.map(on: .immediate) { $0 },
            promise.flatMap(on: .immediate) { Promise(fulfilled: $0) },
            promise.mapResult(on: .immediate) { $0 },
            promise.flatMapResult(on: .immediate) { Promise(with: $0) },
            promise.mapError(on: .immediate) { $0 },
            promise.flatMapError(on: .immediate) { Promise(rejected: $0) },
        ]
        for (index, child) in children.enumerated() {
            #expect(child != promise, "child \(index) is the receiver")
            for other in children[(index + 1)...] {
                #expect(child != other)
            }
        }
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        #expect(promise.tap(on: .immediate) { _ in } == promise)
        #expect(promise.fork { _ in } == promise)
        #expect(promise.requestCancelOnInvalidate(token) == promise)
        resolver.fulfill(with: 1)
        for child in children {
            #expect(describe(child.result) == "value(1)")
        }
    }

    @Test("two promises with equal values are not equal; copies of one promise are")
    func promiseEqualityIsIdentity() {
        let first = IntPromise(fulfilled: 1)
        let second = IntPromise(fulfilled: 1)
        let copy = first
        #expect(first == copy)
        #expect(first != second)
    }

    @Test("fork calls its handler synchronously with the receiver and rethrows (L3)")
    func forkCallsHandlerSynchronously() throws {
        let promise = IntPromise(fulfilled: 5)
        let seen = Recorder<Bool>()
        let returned = promise.fork { seen.record($0 == promise) }
        #expect(seen.values == [true])
        #expect(returned == promise)
        #expect(throws: TestError.thrown) {
            _ = try promise.fork { _ in throw TestError.thrown }
        }
    }
}
