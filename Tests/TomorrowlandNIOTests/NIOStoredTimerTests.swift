#if NIO
    import NIOCore
    import NIOEmbedded
    import NIOPosix
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// `NIOEventLoopExecutor`'s `storeTimer`/`cancelStoredTimer`: a promise timer armed on the
    /// loop's thread goes into the executor's own heap as it is (no closure, no handle), and the
    /// heap tells it when it fires or will never fire.
    @Suite("NIOStoredTimer")
    struct NIOStoredTimerTests {
        /// A promise timer that records what the executor told it.
        final class RecordingTimer: PromiseTimerJob {
            let log = Recorder<String>()
            func timerFired() { log.record("fired") }
            func timerReleased() { log.record("released") }
        }

        @Test func aTimerStoredOnTheLoopsThreadFiresOnceInDeadlineOrderWithClosureTimers() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let order = Recorder<String>()
            let stored = RecordingTimer()
            _ = executor.scheduleSelfGuarded(after: .seconds(2)) { order.record("closure at 2 s") }
            let id = executor.storeTimer(stored, after: .seconds(1))
            #expect(id != nil)
            _ = executor.scheduleSelfGuarded(after: .seconds(1)) { order.record("closure at 1 s") }
            #expect(executor.timers.count == 3)
            loop.advanceTime(by: .seconds(1))
            #expect(stored.log.values == ["fired"])
            #expect(order.values == ["closure at 1 s"])
            loop.advanceTime(by: .seconds(1))
            #expect(order.values == ["closure at 1 s", "closure at 2 s"])
            #expect(stored.log.values == ["fired"])
            try loop.syncShutdownGracefully()
        }

        @Test func cancellingAStoredTimerOnTheLoopsThreadRemovesItAtOnce() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let stored = RecordingTimer()
            let id = try #require(executor.storeTimer(stored, after: .seconds(1)))
            executor.cancelStoredTimer(id)
            #expect(executor.timers.count == 0)
            loop.advanceTime(by: .seconds(5))
            try loop.syncShutdownGracefully()
            #expect(stored.log.values.isEmpty)
        }

        @Test func aTimeoutArmedOnTheLoopIsOneStoredTimerThatItsRequestRemovesWhenItResolves() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let (request, resolver) = Promise<Int, TestError>.makeWithResolver()
            let deadline = request.timeout(on: .nio(loop), delay: .seconds(30))
            #expect(executor.timers.count == 1)
            resolver.fulfill(with: 7)
            #expect(executor.timers.count == 0)
            loop.run()
            #expect(deadline.result == .value(7))
            try loop.syncShutdownGracefully()
        }

        @Test func aStoredTimeoutThatComesDueRejectsWithTimedOut() throws {
            let loop = EmbeddedEventLoop()
            let (request, resolver) = Promise<Int, TestError>.makeWithResolver()
            let deadline = request.timeout(on: .nio(loop), delay: .seconds(30))
            loop.advanceTime(by: .seconds(30))
            loop.run()
            #expect(deadline.result == .error(.timedOut))
            resolver.cancel()
            try loop.syncShutdownGracefully()
        }

        @Test func shutdownReleasesAStoredTimerUnrunAndItsTimeoutEndsCancelled() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let stored = RecordingTimer()
            _ = try #require(executor.storeTimer(stored, after: .seconds(10)))
            let (request, resolver) = Promise<Int, TestError>.makeWithResolver()
            let deadline = request.timeout(on: .nio(loop), delay: .seconds(10))
            try loop.syncShutdownGracefully()
            #expect(stored.log.values == ["released"])
            #expect(executor.timers.count == 0)
            #expect(deadline.result?.isCancelled == true)
            resolver.cancel()
        }

        @Test func aTimeoutArmedOnALoopThatWasShutDownEndsCancelledAtOnce() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            try loop.syncShutdownGracefully()
            let stored = RecordingTimer()
            // NIO refuses the callback the heap arms for it: the timer is released inside the call.
            _ = executor.storeTimer(stored, after: .seconds(10))
            #expect(stored.log.values == ["released"])
            let (request, resolver) = Promise<Int, TestError>.makeWithResolver()
            let deadline = request.timeout(on: .nio(loop), delay: .seconds(10))
            #expect(deadline.result?.isCancelled == true)
            #expect(executor.timers.count == 0)
            resolver.cancel()
        }

        @Test func onAnotherThreadTheExecutorDeclinesAndTheTimeoutStillWorks() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let stored = RecordingTimer()
                #expect(executor.storeTimer(stored, after: .seconds(1)) == nil)
                let (request, _) = Promise<Int, TestError>.makeWithResolver()
                let deadline = request.timeout(on: .nio(loop), delay: .milliseconds(10))
                #expect(await waitForResult(deadline) == .error(.timedOut))
                #expect(stored.log.values.isEmpty)
            }
        }
    }
#endif
