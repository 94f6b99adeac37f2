#if Tracing
    import Foundation
    import ServiceContextModule
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandTestSupport
    import TomorrowlandTesting
    import TomorrowlandTracing

    extension ServiceContextPropagationTests {
        /// Where a restored context ends, and what decides it (B10).
        @Suite struct Scope {
            @Test func theContextDoesNotLeakIntoLaterWorkOnTheLoopThread() {
                withPropagation {
                    let loop = EventLoop()
                    let thread = Thread { loop.run() }
                    thread.start()
                    defer { loop.shutdown() }
                    let seen = Recorder<String>()
                    let callback = inRequest("A") {
                        Promise<Int, Never>(fulfilled: 1).map(on: .loop(loop)) { _ in
                            seen.record("callback=\(ServiceContext.currentRequestID ?? "none")")
                        }
                    }
                    _ = blockingResult(of: callback)
                    // Plain loop work after the callback, and a callback registered with no context.
                    let (after, resolver) = Promise<Void, Never>.makeWithResolver()
                    _ = loop.execute {
                        seen.record("execute=\(ServiceContext.currentRequestID ?? "none")")
                        resolver.fulfill(with: ())
                    }
                    _ = blockingResult(of: after)
                    let unscoped = Promise<Int, Never>(fulfilled: 1).map(on: .loop(loop)) { _ in
                        seen.record("unscoped=\(ServiceContext.currentRequestID ?? "none")")
                    }
                    _ = blockingResult(of: unscoped)
                    #expect(seen.values == ["callback=A", "execute=none", "unscoped=none"])
                }
            }

            @Test func registrationNotResolutionDecidesForInlineCallbacks() {
                withPropagation {
                    let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                    let seen = Recorder<String>()
                    // Registered outside any request: it must not see the resolver's.
                    _ = promise.map(on: .immediate) { _ in
                        seen.record("unscoped=\(ServiceContext.currentRequestID ?? "none")")
                    }
                    _ = inRequest("A") {
                        promise.map(on: .immediate) { _ in seen.record("A=\(ServiceContext.currentRequestID ?? "none")")
                        }
                    }
                    inRequest("resolving") {
                        resolver.fulfill(with: 1)
                        // And the resolver's own context is back once the callbacks ran.
                        seen.record("after=\(ServiceContext.currentRequestID ?? "none")")
                    }
                    #expect(seen.values == ["unscoped=none", "A=A", "after=resolving"])
                }
            }

            @Test func aCallbackRegisteredWhileOffKeepsNoContext() throws {
                #expect(!ServiceContextPropagation.isOn)
                try withTestLoop { loop in
                    let seen = inRequest("A") {
                        Promise<Int, Never>(fulfilled: 1).map(on: .executor(loop)) { _ in
                            ServiceContext.currentRequestID
                        }
                    }
                    // Registered before the start: still no context once propagation is on.
                    withPropagation {
                        loop.run()
                    }
                    #expect(seen.result == .value(nil))
                }
            }

            @Test func startsAndStopsNest() {
                #expect(!ServiceContextPropagation.isOn)
                ServiceContextPropagation.start()
                ServiceContextPropagation.start()
                ServiceContextPropagation.stop()
                #expect(ServiceContextPropagation.isOn)
                ServiceContextPropagation.stop()
                #expect(!ServiceContextPropagation.isOn)
                // An unbalanced stop does not underflow.
                ServiceContextPropagation.stop()
                ServiceContextPropagation.start()
                #expect(ServiceContextPropagation.isOn)
                ServiceContextPropagation.stop()
                #expect(!ServiceContextPropagation.isOn)
            }
        }
    }
#endif
