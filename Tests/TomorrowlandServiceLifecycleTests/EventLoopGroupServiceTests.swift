#if ServiceLifecycle
    import ServiceLifecycle
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandServiceLifecycle
    import TomorrowlandTestSupport

    /// `EventLoopGroupService` in a `ServiceGroup`: the order of a graceful shutdown, the grace
    /// period, cancellation, a shutdown from elsewhere, misuse. Real loops and sockets; real time
    /// only where a grace period is the point.
    ///
    /// The time limit is what fails a drain that is never cut short. It is generous: the grace
    /// timers are `Task.sleep`s on the cooperative pool, which the parallel test run can starve
    /// for tens of seconds on a loaded 2-core machine (37 s measured under ThreadSanitizer).
    @Suite(.timeLimit(.minutes(2)))
    struct EventLoopGroupServiceTests {
        @Test func gracefulShutdownOfTheServiceGroupShutsEveryLoopDownAndRunReturns() async throws {
            let group = EventLoopGroup(loopCount: 2)
            let service = EventLoopGroupService(group: group)
            let serviceGroup = ServiceGroup(services: [service])
            // Remembered by the group until it runs.
            await serviceGroup.triggerGracefulShutdown()
            try await serviceGroup.run()
            #expect(group.loops.allSatisfy { $0.isShutdownComplete })
        }

        @Test func gracefulShutdownStopsAcceptingThenLetsInFlightWorkFinishThenShutsTheLoopsDown() async throws {
            let group = EventLoopGroup(loopCount: 1)
            let loop = group.loops[0]
            let service = EventLoopGroupService(group: group, gracePeriod: .seconds(20))
            let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
            let port = listener.localPort
            let events = Recorder<String>()
            // The first hook's work goes on only once the second hook was called: the hooks are
            // all called before any is waited for, however slowly the machine runs them.
            let (secondHookCalled, secondHookResolver) = Promise<Void, NoError>.makeWithResolver()
            #expect(service.addListener(listener))
            #expect(
                service.onGracefulShutdown { _ in
                    events.record("first hook, listener closed: \(listener.isClosed)")
                    // Work in flight: it ends on the loop 200 ms later, and the loop still runs it.
                    return secondHookCalled.flatMap(on: .loop(loop)) { loop.sleep(for: .milliseconds(200)) }
                        .map(on: .loop(loop)) {
                            let refused = BlockingClient.connect(port: port) == nil
                            events.record("in-flight work finished, new clients refused: \(refused)")
                        }
                })
            service.onGracefulShutdown { _ in
                events.record("second hook")
                secondHookResolver.fulfill(with: ())
                return Promise<Void, NoError>(fulfilled: ())
            }
            let serviceGroup = ServiceGroup(services: [service])
            await serviceGroup.triggerGracefulShutdown()
            try await serviceGroup.run()
            events.record("run returned, loop shut down: \(loop.isShutdownComplete)")
            #expect(
                events.values == [
                    "first hook, listener closed: true",
                    "second hook",
                    "in-flight work finished, new clients refused: true",
                    "run returned, loop shut down: true",
                ])
        }

        @Test func repliesAlreadyQueuedReachTheClientBeforeTheLoopsShutDown() async throws {
            let group = EventLoopGroup(loopCount: 1)
            let loop = group.loops[0]
            let service = EventLoopGroupService(group: group, gracePeriod: .seconds(20))
            let replySize = 4 << 20
            let queued = OneShotFlag()
            let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
                connection.enqueue([UInt8](repeating: 7, count: replySize))
                queued.set()
            }
            service.addListener(listener)
            // A small receive buffer: most of the reply is still queued on the server when the
            // graceful shutdown begins.
            let client = try #require(BlockingClient.connect(port: listener.localPort, receiveBuffer: 4096))
            await queued.wait()
            let received = OneShotResult<(count: Int, closedByPeer: Bool)>()
            service.onGracefulShutdown { _ in
                // The client starts reading only now, with the listener already draining.
                Promise<Void, NoError>(on: .utility) { resolver in
                    received.set(client.readToEnd())
                    resolver.fulfill(with: ())
                }
            }
            let serviceGroup = ServiceGroup(services: [service])
            await serviceGroup.triggerGracefulShutdown()
            try await serviceGroup.run()
            let (count, closedByPeer) = await received.value
            #expect(count == replySize)
            #expect(closedByPeer)
        }

        @Test func aGracePeriodThatRunsOutRequestsCancellationAndShutsTheLoopsDown() async throws {
            let group = EventLoopGroup(loopCount: 1)
            let loop = group.loops[0]
            let service = EventLoopGroupService(group: group, gracePeriod: .milliseconds(200))
            let events = Recorder<String>()
            service.onGracefulShutdown { _ in
                let (promise, resolver) = Promise<Void, NoError>.makeWithResolver()
                resolver.onRequestCancel(on: .immediate) { resolver in
                    events.record("cancel requested, loop still open: \(!loop.isShutdownComplete)")
                    resolver.cancel()
                }
                return promise
            }
            let serviceGroup = ServiceGroup(services: [service])
            await serviceGroup.triggerGracefulShutdown()
            let started = ContinuousClock.now
            try await serviceGroup.run()
            let elapsed = ContinuousClock.now - started
            #expect(events.values == ["cancel requested, loop still open: true"])
            // Not before the grace period. How long after is up to the starved pool (see the
            // suite): that the drain, which never ends by itself, ends at all is the point.
            #expect(elapsed >= .milliseconds(200))
            #expect(loop.isShutdownComplete)
            // Late work is abandoned: a callback aimed at the shut-down loop does not run, and its
            // promise ends cancelled.
            let late = Promise<Int, NoError>(fulfilled: 1).map(on: .loop(loop)) { $0 + 1 }
            #expect(await settled(late) == .cancelled)
        }

        @Test func cancellingTheTaskShutsTheLoopsDownWithoutCallingTheHooks() async throws {
            let group = EventLoopGroup(loopCount: 2)
            let service = EventLoopGroupService(group: group, gracePeriod: .seconds(60))
            let events = Recorder<String>()
            service.onGracefulShutdown { _ in
                events.record("hook called")
                return Promise<Void, NoError>(fulfilled: ())
            }
            let running = Task { try await service.run() }
            running.cancel()
            try await running.value
            #expect(group.loops.allSatisfy { $0.isShutdownComplete })
            #expect(events.values.isEmpty)
        }

        @Test func theServiceGroupsMaximumGracefulShutdownDurationCancelsTheDrain() async throws {
            let group = EventLoopGroup(loopCount: 1)
            // A grace period far past the suite's time limit: only the group's escalation can
            // end this drain in time.
            let service = EventLoopGroupService(group: group, gracePeriod: .seconds(3600))
            let events = Recorder<String>()
            service.onGracefulShutdown { _ in
                let (promise, resolver) = Promise<Void, NoError>.makeWithResolver()
                resolver.onRequestCancel(on: .immediate) { resolver in
                    events.record("cancel requested")
                    resolver.cancel()
                }
                return promise
            }
            var configuration = ServiceGroupConfiguration(services: [service], logger: .current)
            configuration.maximumGracefulShutdownDuration = .milliseconds(200)
            let serviceGroup = ServiceGroup(configuration: configuration)
            await serviceGroup.triggerGracefulShutdown()
            // The escalation to cancellation is no error: the service returns once its loops are down.
            try await serviceGroup.run()
            #expect(events.values == ["cancel requested"])
            #expect(group.loops[0].isShutdownComplete)
        }

        @Test func aShutdownOfTheGroupElsewhereEndsRunAndTheServiceGroup() async throws {
            let group = EventLoopGroup(loopCount: 2)
            let service = EventLoopGroupService(group: group)
            let serviceGroup = ServiceGroup(services: [service])
            let running = Task { try await serviceGroup.run() }
            await onBlockingThread { group.syncShutdownGracefully() }
            // A service that returns on its own ends the ServiceGroup (its default behaviour).
            await #expect(throws: ServiceGroupError.self) { try await running.value }
        }

        @Test func registrationsAfterTheDrainBeganAreRefused() async throws {
            let group = EventLoopGroup(loopCount: 1)
            let loop = group.loops[0]
            let service = EventLoopGroupService(group: group)
            let late = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
            let events = Recorder<String>()
            service.onGracefulShutdown { _ in
                let hookAccepted = service.onGracefulShutdown { _ in
                    events.record("late hook called")
                    return Promise<Void, NoError>(fulfilled: ())
                }
                let listenerAccepted = service.addListener(late)
                events.record(
                    "late hook: \(hookAccepted), late listener: \(listenerAccepted), closed: \(late.isClosed)")
                return Promise<Void, NoError>(fulfilled: ())
            }
            let serviceGroup = ServiceGroup(services: [service])
            await serviceGroup.triggerGracefulShutdown()
            try await serviceGroup.run()
            #expect(events.values == ["late hook: false, late listener: false, closed: true"])
        }

        @Test func runningTwiceAtOnceThrowsAlreadyRunningThenRunningAgainThrowsAlreadyFinished() async throws {
            let group = EventLoopGroup(loopCount: 1)
            let service = EventLoopGroupService(group: group)
            let first = Task { try await service.run() }
            let second = Task { try await service.run() }
            // Whichever started second is refused at once and ends by itself; the other runs until
            // cancelled. Cancelling either before that would let the first end before the second
            // starts (which then finds the service finished), so wait for the refusal first.
            let tasks = [first, second]
            let outcomes = await withTaskGroup(of: (Int, Result<Void, any Error>).self) { group in
                for (index, task) in tasks.enumerated() {
                    group.addTask { (index, await task.result) }
                }
                // The first to end is the refused one; only then is the other cancelled.
                var ended = [await group.next()!]
                tasks[1 - ended[0].0].cancel()
                ended.append(await group.next()!)
                return ended
            }
            #expect(throws: EventLoopServiceError.alreadyRunning) { try outcomes[0].1.get() }
            #expect(throws: Never.self) { try outcomes[1].1.get() }
            await #expect(throws: EventLoopServiceError.alreadyFinished) { try await service.run() }
        }
    }
#endif
