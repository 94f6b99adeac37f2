#if ServiceLifecycle
    import Foundation
    import ServiceLifecycle
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandServiceLifecycle
    import TomorrowlandTestSupport

    /// `EventLoopService`: one loop driven by a thread the service starts, shut down by the
    /// service's graceful shutdown or cancellation.
    @Suite(.timeLimit(.minutes(1)))
    struct EventLoopServiceTests {
        @Test func runDrivesTheLoopOnAThreadOfItsOwnUntilGracefulShutdown() async throws {
            // Longer than Linux's 15 bytes: the service cuts it, or it would not be set at all.
            let service = EventLoopService(threadName: "service-test-loop-thread")
            let loop = service.loop
            // Submitted before run(): it waits for the service's thread.
            let threadName = loop.submit { currentThreadName() }
            let serviceGroup = ServiceGroup(services: [service])
            let running = Task { try await serviceGroup.run() }
            let name = await settled(threadName)
            #expect(name == .value("service-test-lo"), "\(name)")
            #expect(!loop.isShutdownComplete)
            await serviceGroup.triggerGracefulShutdown()
            try await running.value
            #expect(loop.isShutdownComplete)
            #expect(!loop.execute {})
        }

        @Test func gracefulShutdownWaitsForTheHookThenShutsTheLoopDown() async throws {
            let service = EventLoopService()
            let loop = service.loop
            let events = Recorder<String>()
            service.onGracefulShutdown { _ in
                loop.sleep(for: .milliseconds(100)).map(on: .loop(loop)) {
                    events.record("hook's work ran on the loop: \(loop.inEventLoop)")
                }
            }
            let serviceGroup = ServiceGroup(services: [service])
            await serviceGroup.triggerGracefulShutdown()
            try await serviceGroup.run()
            events.record("loop shut down: \(loop.isShutdownComplete)")
            #expect(events.values == ["hook's work ran on the loop: true", "loop shut down: true"])
        }

        @Test func cancellingTheTaskAtOnceShutsTheLoopDownWhateverTheThreadIsDoing() async throws {
            // The shutdown races the thread's first claim of the loop: no crash, no hang.
            for _ in 0..<50 {
                let service = EventLoopService(gracePeriod: .seconds(60))
                let running = Task { try await service.run() }
                running.cancel()
                try await running.value
                #expect(service.loop.isShutdownComplete)
            }
        }

        @Test func stopOnlyMakesTheThreadDriveTheLoopAgain() async throws {
            let service = EventLoopService()
            let loop = service.loop
            let running = Task { try await service.run() }
            #expect(await settled(loop.submit { loop.stop() }).value != nil)
            #expect(await settled(loop.submit { 42 }) == .value(42))
            running.cancel()
            try await running.value
            #expect(loop.isShutdownComplete)
        }

        @Test func aShutdownOfTheLoopElsewhereEndsRun() async throws {
            let service = EventLoopService(gracePeriod: .seconds(60))
            let loop = service.loop
            let running = Task { try await service.run() }
            #expect(await settled(loop.submit { 1 }) == .value(1))
            loop.shutdown()
            try await running.value
            #expect(loop.isShutdownComplete)
        }

        @Test func aLoopAlreadyShutDownEndsRunAtOnce() async throws {
            let loop = EventLoop()
            loop.shutdown()
            let service = EventLoopService(loop: loop)
            try await service.run()
            await #expect(throws: EventLoopServiceError.alreadyFinished) { try await service.run() }
        }
    }
#endif
