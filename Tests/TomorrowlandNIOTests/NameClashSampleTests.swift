#if NIO
    // The documented answer to the name clash, compiled: NIOCore and TomorrowlandLoop both declare
    // `EventLoop` and `EventLoopGroup`. In a file that imports both, spell them module-qualified
    // (`NIOCore.EventLoop`, `TomorrowlandLoop.EventLoop`); the promise contexts need no qualification
    // (`.nio(_:)` takes NIO's loop, `.loop(_:)` ours). This file imports NIOCore, NIOPosix and
    // TomorrowlandLoop together, as the "Running on SwiftNIO" article's sample does.
    import NIOCore
    import NIOPosix
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// A file-local shorthand, as the article suggests for files that name a loop type often.
    private typealias NIOLoop = NIOCore.EventLoop

    @Suite("Both EventLoops in one file")
    struct NameClashSampleTests {
        @Test func aPromiseHopsFromOurLoopToANIOLoopAndBackWithQualifiedNames() async throws {
            let nioGroup: any NIOCore.EventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let nioLoop: any NIOLoop = nioGroup.next()
            let ourGroup = TomorrowlandLoop.EventLoopGroup(loopCount: 1)
            let ourLoop: TomorrowlandLoop.EventLoop = ourGroup.next()

            let promise = Promise<Int, TestError>(on: .loop(ourLoop)) { resolver in
                resolver.fulfill(with: ourLoop.inEventLoop ? 20 : -1000)
            }
            .map(on: .nio(nioLoop)) { value in value + (nioLoop.inEventLoop ? 1 : -1000) }
            let future: EventLoopFuture<Int> = promise.eventLoopFuture(on: nioLoop)
            let back = Promise(future.map { $0 * 2 }).map(on: .loop(ourLoop)) { value in
                ourLoop.inEventLoop ? value : -1
            }

            #expect(await waitForResult(back)?.value == 42)
            _ = await waitForResult(ourGroup.shutdownGracefully())
            try await nioGroup.shutdownGracefully()
        }
    }
#endif
