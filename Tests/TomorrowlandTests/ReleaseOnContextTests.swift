import Dispatch
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Callback lifetimes: an invoked (or token-suppressed) callback is released on its context
/// (B7); every callback, `onRequestCancel` ones included, is released once the promise resolves
/// (B8); promises themselves do not leak after resolution or cancellation.
///
/// Each closure captures a ``DeinitSpy`` that nothing else holds, so the spy's deinit tells
/// when and on which queue the library released the closure.
@Suite("Release of callbacks and promises")
struct ReleaseOnContextTests {
    typealias IntPromise = Promise<Int, String>

    enum Registration: String, CaseIterable, Sendable {
        case then, map, catchError, recover, always, mapResult, flatMapResult, onCancel, tap, thenSuppressed,
            mapSuppressed, alwaysSuppressed

        /// The outcome under which this registration's callback applies.
        var outcome: Outcome {
            switch self {
            case .then, .map, .always, .mapResult, .flatMapResult, .tap, .thenSuppressed, .mapSuppressed,
                .alwaysSuppressed:
                .value
            case .catchError, .recover: .error
            case .onCancel: .cancelled
            }
        }

        /// Registers a callback that captures a fresh spy and nothing else holds the spy.
        func register(
            on promise: IntPromise, context: PromiseContext, token: PromiseInvalidationToken,
            deaths: Recorder<DeinitSpy.Death>
        ) {
            let name = rawValue
            switch self {
            case .then: _ = promise.then(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] _ in spy.touch() }
            case .map:
                _ = promise.map(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] value -> Int in
                    spy.touch(); return value
                }
            case .catchError:
                promise.catch(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] _ in spy.touch() }
            case .recover:
                _ = promise.recover(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] _ -> Int in
                    spy.touch(); return 0
                }
            case .always: promise.always(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] _ in spy.touch() }
            case .mapResult:
                _ = promise.mapResult(on: context) {
                    [spy = DeinitSpy(name, reportingTo: deaths)] result -> PromiseResult<Int, String> in
                    spy.touch(); return result
                }
            case .flatMapResult:
                _ = promise.flatMapResult(on: context) {
                    [spy = DeinitSpy(name, reportingTo: deaths)] result -> IntPromise in
                    spy.touch(); return IntPromise(with: result)
                }
            case .onCancel:
                promise.onCancel(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] in spy.touch() }
            case .tap: promise.tap(on: context) { [spy = DeinitSpy(name, reportingTo: deaths)] _ in spy.touch() }
            case .thenSuppressed:
                _ = promise.then(on: context, token: token) { [spy = DeinitSpy(name, reportingTo: deaths)] _ in
                    spy.touch()
                }
            case .mapSuppressed:
                _ = promise.map(on: context, token: token) {
                    [spy = DeinitSpy(name, reportingTo: deaths)] value -> Int in
                    spy.touch(); return value
                }
            case .alwaysSuppressed:
                promise.always(on: context, token: token) { [spy = DeinitSpy(name, reportingTo: deaths)] _ in
                    spy.touch()
                }
            }
        }
    }

    @Test("an invoked or token-suppressed callback is released on its queue (B7)", arguments: Registration.allCases)
    func releasedOnQueue(registration: Registration) async {
        let queue = makeTaggedQueue("release.queue")
        let deaths = Recorder<DeinitSpy.Death>()
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let (promise, resolver) = IntPromise.makeWithResolver()
        registration.register(on: promise, context: .queue(queue), token: token, deaths: deaths)
        token.invalidate()
        #expect(deaths.values.isEmpty, "callbacks are retained until the promise resolves")
        resolver.settle(registration.outcome)
        #expect(await eventually { deaths.count == 1 })
        #expect(deaths.values.map(\.queueTag) == ["release.queue"])
    }

    @Test("an invoked callback registered on an already-resolved promise is released on its queue (B7)")
    func releasedOnQueueForResolvedPromise() async {
        let queue = makeTaggedQueue("release.resolved")
        let deaths = Recorder<DeinitSpy.Death>()
        // Hold the queue until the registration has returned: in an unoptimised build, this
        // closure literal's capture list holds the spy until then, and that reference is not the
        // library's to release (ReleaseBeforeReturnTests covers the race without it).
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        _ = IntPromise(fulfilled: 1).then(on: .queue(queue)) { [spy = DeinitSpy("then", reportingTo: deaths)] _ in
            spy.touch()
        }
        gate.signal()
        #expect(await eventually { deaths.count == 1 })
        #expect(deaths.values.map(\.queueTag) == ["release.resolved"])
    }

    @Test(".main callbacks, run or suppressed, are released on the main queue (B7)")
    func releasedOnMainQueue() async {
        let deaths = Recorder<DeinitSpy.Death>()
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        for _ in 0..<20 {
            let (promise, resolver) = IntPromise.makeWithResolver()
            _ = promise.then(on: .main) { [spy = DeinitSpy("run", reportingTo: deaths)] _ in spy.touch() }
            _ = promise.then(on: .main, token: token) { [spy = DeinitSpy("suppressed", reportingTo: deaths)] _ in
                spy.touch()
            }
            token.invalidate()
            DispatchQueue.global().async { resolver.fulfill(with: 1) }
        }
        #expect(await eventually { deaths.count == 40 })
        #expect(deaths.values.allSatisfy { $0.queueLabel == DispatchQueue.main.label })
    }

    @Test(".executor callbacks are released on the executor (B7)")
    func releasedOnExecutor() async {
        let executor = SerialQueueExecutor(tag: "release.executor")
        let deaths = Recorder<DeinitSpy.Death>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        _ = promise.map(on: .executor(executor)) { [spy = DeinitSpy("map", reportingTo: deaths)] value -> Int in
            spy.touch(); return value
        }
        resolver.fulfill(with: 1)
        #expect(await eventually { deaths.count == 1 })
        #expect(deaths.values.map(\.queueTag) == ["release.executor"])
    }

    @Test("propagatingCancellation's cancelRequested is released on its context (B7, D8)")
    func cancelRequestedReleasedOnContext() async {
        let queue = makeTaggedQueue("release.propagating")
        let deaths = Recorder<DeinitSpy.Death>()
        let (parent, _) = IntPromise.makeWithResolver()
        let propagating = parent.propagatingCancellation(on: .queue(queue)) {
            [spy = DeinitSpy("cancelRequested", reportingTo: deaths)] _ in spy.touch()
        }
        // Hold the queue until requestCancel has returned, so that the callback runs, and must
        // be released, strictly after the requesting thread is done with it.
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        propagating.requestCancel()
        gate.signal()
        #expect(await eventually { deaths.count == 1 })
        #expect(deaths.values.map(\.queueTag) == ["release.propagating"])
        withExtendedLifetime(parent) {}
    }

    @Test(
        "callbacks are released on their queue even when the queue runs them while the resolving thread is still dispatching (B7)"
    )
    func releasedOnQueueUnderRace() async {
        let queue = makeTaggedQueue("release.race")
        let deaths = Recorder<DeinitSpy.Death>()
        let iterations = 1000
        for _ in 0..<iterations {
            let (promise, resolver) = IntPromise.makeWithResolver()
            _ = promise.then(on: .queue(queue)) { [spy = DeinitSpy("then", reportingTo: deaths)] _ in spy.touch() }
            _ = promise.map(on: .queue(queue)) { [spy = DeinitSpy("map", reportingTo: deaths)] value -> Int in
                spy.touch(); return value
            }
            resolver.fulfill(with: 1)
        }
        #expect(await eventually { deaths.count == 2 * iterations })
        let offQueue = deaths.values.filter { $0.queueTag != "release.race" }.count
        #expect(offQueue == 0, "\(offQueue) of \(2 * iterations) callbacks were released off their queue")
    }

    @Test("cancelRequested is released on its queue even when it runs before requestCancel returns (B7, D8)")
    func cancelRequestedReleasedOnQueueUnderRace() async {
        let queue = makeTaggedQueue("release.cancelRace")
        let deaths = Recorder<DeinitSpy.Death>()
        let iterations = 2000
        var parents: [IntPromise] = []
        for _ in 0..<iterations {
            let (parent, _) = IntPromise.makeWithResolver()
            parents.append(parent)
            let propagating = parent.propagatingCancellation(on: .queue(queue)) {
                [spy = DeinitSpy("cancelRequested", reportingTo: deaths)] _ in spy.touch()
            }
            propagating.requestCancel()
        }
        #expect(await eventually { deaths.count == iterations })
        let offQueue = deaths.values.filter { $0.queueTag != "release.cancelRace" }.count
        #expect(offQueue == 0, "\(offQueue) of \(iterations) cancelRequested callbacks were released off their queue")
        withExtendedLifetime(parents) {}
    }

    @Test(
        "callbacks that do not apply are released once the promise resolves (B8)",
        arguments: [Outcome.value, .error, .cancelled])
    func inapplicableCallbacksAreReleased(outcome: Outcome) async {
        let queue = makeTaggedQueue("release.inapplicable")
        let deaths = Recorder<DeinitSpy.Death>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        if outcome != .value {
            _ = promise.then(on: .queue(queue)) { [spy = DeinitSpy("then", reportingTo: deaths)] _ in spy.touch() }
        }
        if outcome != .error {
            promise.catch(on: .queue(queue)) { [spy = DeinitSpy("catch", reportingTo: deaths)] _ in spy.touch() }
        }
        if outcome != .cancelled {
            promise.onCancel(on: .queue(queue)) { [spy = DeinitSpy("onCancel", reportingTo: deaths)] in spy.touch() }
        }
        #expect(deaths.values.isEmpty)
        resolver.settle(outcome)
        #expect(await eventually { deaths.count == 2 })
    }

    @Test("onRequestCancel callbacks are released once the promise resolves (B8)")
    func requestCancelCallbacksAreReleased() async {
        let deaths = Recorder<DeinitSpy.Death>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { [spy = DeinitSpy("immediate", reportingTo: deaths)] _ in spy.touch()
        }
        resolver.onRequestCancel(on: .default) { [spy = DeinitSpy("default", reportingTo: deaths)] _ in spy.touch() }
        #expect(deaths.values.isEmpty)
        resolver.fulfill(with: 1)
        #expect(await eventually { deaths.count == 2 })
        withExtendedLifetime(promise) {}
    }

    @Test("onRequestCancel callbacks are released after a request and cancellation (B8)")
    func requestCancelCallbacksAreReleasedAfterCancel() async {
        let deaths = Recorder<DeinitSpy.Death>()
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { [spy = DeinitSpy("immediate", reportingTo: deaths)] resolver in
            spy.touch()
            resolver.cancel()
        }
        promise.requestCancel()
        #expect(promise.result == .cancelled)
        #expect(await eventually { deaths.count == 1 })
    }

    @Test("a resolved chain frees its promises and their values once the handles are gone")
    func resolvedChainIsFreed() async {
        let deaths = Recorder<DeinitSpy.Death>()
        var tail: Promise<DeinitSpy, String>? = {
            let (promise, resolver) = Promise<DeinitSpy, String>.makeWithResolver()
            let tail =
                promise
                .map(on: .immediate) { $0 }
                .then(on: .immediate) { _ in }
                .always(on: .immediate) { _ in }
            resolver.fulfill(with: DeinitSpy("value", reportingTo: deaths))
            return tail
        }()
        #expect(tail?.result?.value != nil)
        #expect(deaths.values.isEmpty)
        tail = nil
        #expect(await eventually { deaths.count == 1 }, "the value outlived every promise that held it")
    }

    @Test("a chain cancelled through propagation frees its promises and callbacks once the handles are gone (issue 6)")
    func propagatedCancellationFreesTheChain() async {
        let deaths = Recorder<DeinitSpy.Death>()
        var tail: IntPromise? = {
            let parent = IntPromise(on: .immediate) { [spy = DeinitSpy("work", reportingTo: deaths)] resolver in
                // Like real work: the cancel handler holds the resolver until the promise resolves.
                resolver.onRequestCancel(on: .immediate) { _ in
                    spy.touch()
                    resolver.cancel()
                }
            }
            return
                parent
                .map(on: .immediate) { [spy = DeinitSpy("map", reportingTo: deaths)] value -> Int in
                    spy.touch(); return value
                }
                .then(on: .immediate) { [spy = DeinitSpy("then", reportingTo: deaths)] _ in spy.touch() }
        }()
        #expect(deaths.values.isEmpty)
        tail?.requestCancel()
        #expect(tail?.result == .cancelled)
        tail = nil
        #expect(await eventually { deaths.count == 3 })
        #expect(Set(deaths.values.map(\.name)) == ["work", "map", "then"])
    }

    @Test("a promise kept alive by its own onRequestCancel closure is freed once cancelled")
    func cancelledPromiseIsFreed() async {
        let deaths = Recorder<DeinitSpy.Death>()
        let cancellable: PromiseCancellable = {
            let promise = Promise<Int, String>(on: .immediate) {
                [spy = DeinitSpy("handler capture", reportingTo: deaths)] resolver in
                resolver.onRequestCancel(on: .immediate) { _ in
                    spy.touch()
                    resolver.cancel()
                }
            }
            return promise.cancellable
        }()
        #expect(deaths.values.isEmpty, "the resolver cycle keeps the promise alive until it resolves")
        cancellable.requestCancel()
        #expect(await eventually { deaths.count == 1 })
    }
}
