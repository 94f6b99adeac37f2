#if Tracing
    import Dispatch
    import Foundation
    import ServiceContextModule
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandTestSupport
    import TomorrowlandTesting
    import TomorrowlandTracing
    #if NIO
        import NIOPosix
        import TomorrowlandNIO
    #endif

    extension ServiceContextPropagationTests {
        /// The kinds of context a callback may run on, each made and torn down around a test.
        enum ContextKind: String, CaseIterable, CustomTestStringConvertible {
            case immediate, nowOr, dispatchQueue, globalQueue, operationQueue, eventLoop, nio

            var testDescription: String { rawValue }

            /// Runs `body` with a context of this kind, live until `body` returns.
            func withContext(_ body: (PromiseContext) -> Void) {
                switch self {
                case .immediate:
                    body(.immediate)
                case .nowOr:
                    body(.nowOr(.utility))
                case .dispatchQueue:
                    body(.queue(DispatchQueue(label: "ServiceContextPropagationTests")))
                case .globalQueue:
                    body(.default)
                case .operationQueue:
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 1
                    body(.operationQueue(queue))
                case .eventLoop:
                    let loop = EventLoop()
                    let thread = Thread { loop.run() }
                    thread.start()
                    body(.loop(loop))
                    loop.shutdown()
                case .nio:
                    #if NIO
                        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                        body(.nio(group.next()))
                        try? group.syncShutdownGracefully()
                    #else
                        body(.utility)
                    #endif
                }
            }
        }

        /// A callback sees the context of its registration on every kind of context, whichever
        /// context the resolving thread has (B10).
        @Suite struct OnEveryContextKind {
            @Test(arguments: ContextKind.allCases)
            func aMapCallbackSeesTheContextCurrentWhereItWasRegistered(kind: ContextKind) {
                withPropagation {
                    kind.withContext { context in
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        let seen = inRequest("registered") {
                            promise.map(on: context) { _ in ServiceContext.currentRequestID }
                        }
                        // Resolved from another thread, inside another request.
                        let resolving = Thread { inRequest("resolving") { resolver.fulfill(with: 1) } }
                        resolving.start()
                        #expect(blockingResult(of: seen) == .value("registered"))
                    }
                }
            }

            @Test(arguments: ContextKind.allCases)
            func aCallbackOnAnAlreadyResolvedPromiseSeesItsRegistrationContext(kind: ContextKind) {
                withPropagation {
                    kind.withContext { context in
                        let seen = inRequest("registered") {
                            Promise<Int, Never>(fulfilled: 1).map(on: context) { _ in ServiceContext.currentRequestID }
                        }
                        #expect(blockingResult(of: seen) == .value("registered"))
                    }
                }
            }

            @Test(arguments: ContextKind.allCases)
            func aPromiseHandlerAndATapSeeTheirRegistrationContext(kind: ContextKind) {
                withPropagation {
                    kind.withContext { context in
                        let handlerSaw = inRequest("handler") {
                            Promise<String?, Never>(on: context) { resolver in
                                resolver.fulfill(with: ServiceContext.currentRequestID)
                            }
                        }
                        #expect(blockingResult(of: handlerSaw) == .value("handler"))

                        let tapSaw = Locked<String??>(nil)
                        let tapped = inRequest("tap") {
                            Promise<Int, Never>(fulfilled: 1).tap(on: context) { _ in
                                tapSaw.withLock { $0 = .some(ServiceContext.currentRequestID) }
                            }
                        }
                        _ = blockingResult(of: tapped)
                        #expect(waitUntil { tapSaw.withLock { $0 != nil } })
                        #expect(tapSaw.withLock { $0 } == .some("tap"))
                    }
                }
            }
        }

        /// `TestLoop`: the same rule on virtual time, run by the test's own thread.
        @Suite struct OnATestLoop {
            @Test func callbacksOnATestLoopSeeTheirRegistrationContextNotTheDrivingThreads() throws {
                try withPropagation {
                    try withTestLoop { loop in
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        let first = inRequest("first") {
                            promise.map(on: .executor(loop)) { _ in ServiceContext.currentRequestID }
                        }
                        let none = promise.map(on: .executor(loop)) { _ in ServiceContext.currentRequestID }
                        let second = inRequest("second") {
                            promise.map(on: .executor(loop)) { _ in ServiceContext.currentRequestID }
                        }
                        resolver.fulfill(with: 1)
                        // The thread that drives the loop is inside a third request: no callback sees it.
                        inRequest("driver") { loop.run() }
                        #expect(first.result == .value("first"))
                        #expect(none.result == .value(nil))
                        #expect(second.result == .value("second"))
                    }
                }
            }
        }
    }
#endif
