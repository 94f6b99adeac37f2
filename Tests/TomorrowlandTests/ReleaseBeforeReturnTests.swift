import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// B7 when the callback wins the race with its own registration: registered from a background
/// thread on a promise that is already resolved (or resolves at once), the callback may run on
/// its context, and be done, before the registering call returns. The last reference to the
/// closure must still be released there, not by the registering thread on its way out.
///
/// Each closure holds a ``DeinitSpy`` that nothing else holds (see
/// ``DeinitSpy/holding(_:reportingTo:_:)``), so the spy dies with the closure.
@Suite("Release of callbacks that run before their registration returns")
struct ReleaseBeforeReturnTests {
    typealias IntPromise = Promise<Int, String>

    /// Every way of registering a callback that B7 covers.
    enum Registration: String, CaseIterable, Sendable {
        case then, map, flatMap, catchError, recover, mapError, flatMapError, always, mapResult, flatMapResult,
            onCancel, tap, thenWithToken, mapWithToken, alwaysWithToken, tapWithToken, tokenPromiseAlways,
            tokenPromiseMap

        /// The outcome under which this registration's callback applies.
        var outcome: Outcome {
            switch self {
            case .catchError, .recover, .mapError, .flatMapError: .error
            case .onCancel: .cancelled
            default: .value
            }
        }

        /// Registers a callback that holds a new spy, which nothing else holds.
        func register(
            on promise: IntPromise, context: PromiseContext, token: PromiseInvalidationToken,
            deaths: Recorder<DeinitSpy.Death>
        ) {
            let name = rawValue
            func spying<Input, Output>(
                _ body: @escaping @Sendable (Input) -> Output
            ) -> @Sendable (Input) -> Output {
                DeinitSpy.holding(name, reportingTo: deaths, body)
            }
            switch self {
            case .then: _ = promise.then(on: context, spying { _ in })
            case .map: _ = promise.map(on: context, spying { $0 + 1 })
            case .flatMap: _ = promise.flatMap(on: context, spying { IntPromise(fulfilled: $0) })
            case .catchError: promise.catch(on: context, spying { _ in })
            case .recover: _ = promise.recover(on: context, spying { _ in 0 })
            case .mapError: _ = promise.mapError(on: context, spying { $0 + "!" })
            case .flatMapError: _ = promise.flatMapError(on: context, spying { Promise<Int, String>(rejected: $0) })
            case .always: promise.always(on: context, spying { _ in })
            case .mapResult: _ = promise.mapResult(on: context, spying { $0 })
            case .flatMapResult: _ = promise.flatMapResult(on: context, spying { IntPromise(with: $0) })
            case .onCancel: promise.onCancel(on: context, DeinitSpy.holding(name, reportingTo: deaths))
            case .tap: promise.tap(on: context, spying { _ in })
            case .thenWithToken: _ = promise.then(on: context, token: token, spying { _ in })
            case .mapWithToken: _ = promise.map(on: context, token: token, spying { $0 + 1 })
            case .alwaysWithToken: promise.always(on: context, token: token, spying { _ in })
            case .tapWithToken: promise.tap(on: context, token: token, spying { _ in })
            case .tokenPromiseAlways:
                _ = TokenPromise(promise: promise, token: token).always(on: context, spying { _ in })
            case .tokenPromiseMap: _ = TokenPromise(promise: promise, token: token).map(on: context, spying { $0 + 1 })
            }
        }
    }

    /// Registrations per case: enough that the race shows on most runs before the fix, little
    /// enough to run in about a second.
    static let iterations = 2000

    /// Registers `iterations` callbacks of `registration` on `context` from a background thread,
    /// each on an already-settled promise whose outcome the callback applies to, and returns
    /// how the spies died once all have (`nil` if some never did).
    static func registerRacing(
        _ registration: Registration, on context: PromiseContext, iterations: Int = iterations
    ) async -> [DeinitSpy.Death]? {
        let deaths = Recorder<DeinitSpy.Death>()
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        await onDedicatedThread {
            for _ in 0..<iterations {
                let (promise, resolver) = IntPromise.makeWithResolver()
                resolver.settle(registration.outcome)
                registration.register(on: promise, context: context, token: token, deaths: deaths)
            }
        }
        guard await eventually({ deaths.count == iterations }) else { return nil }
        return deaths.values
    }

    @Test(
        "a .main callback that ran before its registration returned is released on the main queue (B7)",
        arguments: Registration.allCases)
    func mainCallbackReleasedOnMain(registration: Registration) async {
        let deaths = await Self.registerRacing(registration, on: .main)
        #expect(deaths != nil, "not every callback was released")
        let offMain = (deaths ?? []).filter { $0.queueLabel != DispatchQueue.main.label }.count
        #expect(offMain == 0, "\(offMain) of \(Self.iterations) .main callbacks were released off the main queue")
    }

    @Test(
        "a .queue callback that ran before its registration returned is released on its queue (B7)",
        arguments: Registration.allCases)
    func queueCallbackReleasedOnQueue(registration: Registration) async {
        let queue = makeTaggedQueue("release.beforeReturn")
        let deaths = await Self.registerRacing(registration, on: .queue(queue))
        #expect(deaths != nil, "not every callback was released")
        let offQueue = (deaths ?? []).filter { $0.queueTag != "release.beforeReturn" }.count
        #expect(offQueue == 0, "\(offQueue) of \(Self.iterations) .queue callbacks were released off their queue")
    }

    /// The shape of Tomorrowland's own `StressTests.testMainContextBlockDeallocAfterExec`: a
    /// thread registers `always(on: .main)` callbacks on promises that resolve on 20 busy
    /// background queues, 200 rounds; `makeCallback` makes each callback.
    static func registerOnConcurrentlyResolvingPromises(
        deaths: Recorder<DeinitSpy.Death>,
        makeCallback: @escaping @Sendable (IntPromise) -> Void
    ) async -> Int {
        let queues = (0..<20).map { _ in DispatchQueue(label: "release.background", qos: .background) }
        let rounds = 200
        await onDedicatedThread {
            for _ in 0..<rounds {
                let group = DispatchGroup()
                for queue in queues {
                    let promise = IntPromise(on: .queue(queue)) { resolver in
                        // Busy work, so that resolution and registration interleave.
                        var sum = 0
                        for _ in 0..<1000 { sum &+= Int.random(in: 1...10_000) }
                        resolver.fulfill(with: sum)
                    }
                    makeCallback(promise)
                    group.enter()
                    queue.async { group.leave() }
                }
                group.wait()
            }
        }
        return rounds * queues.count
    }

    @Test(".main callbacks on promises resolving concurrently are all released on the main queue (B7)")
    func mainCallbacksOnConcurrentlyResolvingPromises() async {
        let deaths = Recorder<DeinitSpy.Death>()
        let expected = await Self.registerOnConcurrentlyResolvingPromises(deaths: deaths) { promise in
            promise.always(on: .main, DeinitSpy.holding("always", reportingTo: deaths) { _ in })
        }
        #expect(await eventually { deaths.count == expected })
        let offMain = deaths.values.filter { $0.queueLabel != DispatchQueue.main.label }.count
        #expect(offMain == 0, "\(offMain) of \(expected) .main callbacks were released off the main queue")
    }

    /// Tomorrowland's test exactly: a closure literal that captures its spy. Only in an optimised
    /// build: unoptimised, the capture list's binding in this test holds the spy too, until the
    /// registering statement ends (see ``DeinitSpy/holding(_:reportingTo:_:)``).
    @Test(
        ".main closure literals on promises resolving concurrently are all released on the main queue (B7)",
        .enabled(if: !isDebugBuild, "an unoptimised caller holds captured values past the call"))
    func mainClosureLiteralsOnConcurrentlyResolvingPromises() async {
        let deaths = Recorder<DeinitSpy.Death>()
        let expected = await Self.registerOnConcurrentlyResolvingPromises(deaths: deaths) { promise in
            promise.always(on: .main) { [spy = DeinitSpy("always", reportingTo: deaths)] _ in spy.touch() }
        }
        #expect(await eventually { deaths.count == expected })
        let offMain = deaths.values.filter { $0.queueLabel != DispatchQueue.main.label }.count
        #expect(offMain == 0, "\(offMain) of \(expected) .main callbacks were released off the main queue")
    }
}

/// Whether this test target was built unoptimised (SwiftPM's debug configuration defines `DEBUG`).
#if DEBUG
    let isDebugBuild = true
#else
    let isDebugBuild = false
#endif
