#if Tracing
    import Foundation
    import ServiceContextModule
    import Testing
    import Tomorrowland
    import TomorrowlandTestSupport
    import TomorrowlandTesting
    import TomorrowlandTracing

    extension ServiceContextPropagationTests {
        /// Through each combinator: every callback sees the context of its own registration, on a
        /// TestLoop (virtual time for `timeout`, `delay` and retries), with the resolving code in
        /// another request (B10).
        @Suite struct ThroughCombinators {
            /// A promise resolved later, inside request "resolving".
            static func resolvedLater(
                _ value: Int = 1
            ) -> (Promise<Int, TestError>, @Sendable () -> Void) {
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                return (promise, { inRequest("resolving") { resolver.fulfill(with: value) } })
            }

            @Test func flatMapAndTheChainItReturns() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let (promise, resolve) = Self.resolvedLater()
                        let (inner, resolveInner) = Self.resolvedLater(2)
                        let outer = Locked<String?>(nil)
                        let chained = inRequest("A") {
                            promise.flatMap(on: context) { _ -> Promise<String?, TestError> in
                                outer.withLock { $0 = ServiceContext.currentRequestID }
                                // Registered inside the callback: it inherits the callback's context.
                                return inner.map(on: context) { _ in ServiceContext.currentRequestID }
                            }
                        }
                        resolve()
                        loop.run()
                        resolveInner()
                        inRequest("driver") { loop.run() }
                        #expect(outer.withLock { $0 } == "A")
                        #expect(chained.result == .value("A"))
                    }
                }
            }

            @Test func whenAllAndWhenFirst() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let (first, resolveFirst) = Self.resolvedLater(1)
                        let (second, resolveSecond) = Self.resolvedLater(2)
                        let all = inRequest("all") {
                            when(fulfilled: [first, second]).map(on: context) { _ in ServiceContext.currentRequestID }
                        }
                        let any = inRequest("first") {
                            when(first: [first, second], cancelRemaining: false).map(on: context) { _ in
                                ServiceContext.currentRequestID
                            }
                        }
                        resolveFirst()
                        resolveSecond()
                        // `when(fulfilled:)` delivers through a global queue (its `qos`): wait until
                        // both callbacks are on the loop.
                        #expect(waitUntil { loop.readyCount == 2 })
                        loop.run()
                        #expect(all.result == .value("all"))
                        #expect(any.result == .value("first"))
                    }
                }
            }

            @Test func timeoutAndRecover() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let (never, resolver) = Promise<Int, TestError>.makeWithResolver()
                        let recovered = inRequest("A") {
                            never.timeout(on: context, delay: .seconds(5))
                                .recover(on: context) { _ in ServiceContext.currentRequestID == "A" ? 1 : 0 }
                                .map(on: context) { value in "\(value) \(ServiceContext.currentRequestID ?? "none")" }
                        }
                        inRequest("driver") { loop.advance(by: .seconds(5)) }
                        #expect(recovered.result == .value("1 A"))
                        resolver.cancel()
                    }
                }
            }

            @Test func delay() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let (promise, resolve) = Self.resolvedLater()
                        let delayed = inRequest("A") {
                            promise.delay(on: context, .seconds(2)).map(on: context) { _ in
                                ServiceContext.currentRequestID
                            }
                        }
                        resolve()
                        loop.advance(by: .seconds(1))
                        #expect(delayed.result == nil)
                        loop.advance(by: .seconds(1))
                        #expect(delayed.result == .value("A"))
                    }
                }
            }

            @Test func callbacksWithATokenAndTheRestOfTheFamilies() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let token = PromiseInvalidationToken()
                        let (promise, resolve) = Self.resolvedLater()
                        let (failing, failingResolver) = Promise<Int, TestError>.makeWithResolver()
                        let seen = Recorder<String>()
                        let record: @Sendable (String) -> Void = { label in
                            seen.record("\(label)=\(ServiceContext.currentRequestID ?? "none")")
                        }
                        inRequest("A") {
                            _ = promise.map(on: context, token: token) { _ in record("map+token") }
                            _ = promise.then(on: context, token: token) { _ in record("then+token") }
                            _ = promise.always(on: context) { _ in record("always") }
                            _ = promise.mapResult(on: context) { _ in
                                record("mapResult")
                                return PromiseResult<Int, TestError>.value(0)
                            }
                            _ = failing.catch(on: context) { _ in record("catch") }
                            _ = failing.mapError(on: context) { error -> TestError in
                                record("mapError")
                                return error
                            }
                            _ = promise.tap(on: context, token: token) { _ in record("tap+token") }
                        }
                        resolve()
                        inRequest("resolving") { failingResolver.reject(with: TestError()) }
                        inRequest("driver") { loop.run() }
                        #expect(
                            Set(seen.values)
                                == [
                                    "map+token=A", "then+token=A", "always=A", "mapResult=A", "catch=A", "mapError=A",
                                    "tap+token=A",
                                ])
                    }
                }
            }

            @Test func onCancelAndOnRequestCancel() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let seen = Recorder<String>()
                        let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                        inRequest("A") {
                            resolver.onRequestCancel(on: context) { resolver in
                                seen.record("onRequestCancel=\(ServiceContext.currentRequestID ?? "none")")
                                resolver.cancel()
                            }
                            _ = promise.onCancel(on: context) {
                                seen.record("onCancel=\(ServiceContext.currentRequestID ?? "none")")
                            }
                        }
                        inRequest("canceller") { promise.requestCancel() }
                        loop.run()
                        #expect(seen.values == ["onRequestCancel=A", "onCancel=A"])
                    }
                }
            }

            @Test func delayedPromiseHandlerAndRetries() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let context = PromiseContext.executor(loop)
                        let delayed = inRequest("made") {
                            DelayedPromise<String?, TestError>(on: context) { resolver in
                                resolver.fulfill(with: ServiceContext.currentRequestID)
                            }
                        }
                        let attempts = Recorder<String>()
                        let retried = inRequest("retry") {
                            Promise<Int, TestError>.retry(on: context, attempts: 3, backoff: .fixed(.seconds(1))) {
                                attempt in
                                attempts.record("\(attempt)=\(ServiceContext.currentRequestID ?? "none")")
                                return attempt < 3 ? Promise(rejected: TestError()) : Promise(fulfilled: attempt)
                            }
                        }
                        // Started from another request: the handler keeps the context of its making.
                        let started = inRequest("accessor") { delayed.promise }
                        inRequest("driver") { loop.advance(by: .seconds(5)) }
                        #expect(started.result == .value("made"))
                        #expect(retried.result == .value(3))
                        #expect(attempts.values == ["1=retry", "2=retry", "3=retry"])
                    }
                }
            }

            @Test func awaitingAValueKeepsTheTasksContext() async throws {
                ServiceContextPropagation.start()
                defer { ServiceContextPropagation.stop() }
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                let seen = await ServiceContext.withValue(.request("task")) {
                    let resolving = Thread { inRequest("resolving") { resolver.fulfill(with: 1) } }
                    resolving.start()
                    _ = try? await promise.value
                    return ServiceContext.currentRequestID
                }
                #expect(seen == "task")
            }
        }
    }

    /// The error of the combinator tests' promises.
    struct TestError: Error, Equatable {}
#endif
