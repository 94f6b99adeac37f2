#if NIO
    import NIOCore
    import NIOPosix
    import Testing
    import Tomorrowland
    import TomorrowlandNIO

    /// The module page's and the "Running on SwiftNIO" article's samples, compiled and run.
    @Suite("TomorrowlandNIO DocC examples")
    struct DocCNIOExampleTests {
        struct User: Sendable {
            var name: String
        }

        @Test func theModulePagesHandlerMapsOnTheLoopAndReturnsAFuture() async throws {
            try await withNIOLoop { eventLoop in
                func fetchUser() -> Promise<User, any Error> {
                    Promise(on: .default) { $0.fulfill(with: User(name: "Ada")) }
                }
                func handle(on eventLoop: any EventLoop) -> EventLoopFuture<String> {
                    fetchUser()
                        .map(on: .nio(eventLoop)) { $0.name }
                        .timeout(on: .nio(eventLoop), delay: .seconds(2))
                        .eventLoopFuture(on: eventLoop)
                }
                let name = try await handle(on: eventLoop).get()
                #expect(name == "Ada")
            }
        }

        @Test func theArticlesContextAndBridgeSamplesRun() async throws {
            try await withNIOLoop { eventLoop in
                let promise = Promise<Int, any Error>(on: .nio(eventLoop)) { resolver in
                    resolver.fulfill(with: 20)
                }
                .map(on: .nio(eventLoop)) { $0 + 1 }
                .timeout(on: .nio(eventLoop), delay: .seconds(5))
                let future: EventLoopFuture<Int> = promise.eventLoopFuture(on: eventLoop)
                let nioPromise = eventLoop.makePromise(of: Int.self)
                nioPromise.completeWith(promise)
                let fromFuture = Promise(future.map { $0 * 2 })
                let both = try await (nioPromise.futureResult.get(), fromFuture.value)
                #expect(both == (21, 42))
            }
        }
    }
#endif
