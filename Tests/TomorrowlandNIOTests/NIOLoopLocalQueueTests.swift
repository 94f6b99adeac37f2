#if NIO
    import NIOCore
    import NIOEmbedded
    import NIOPosix
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// The executor's local FIFO for work submitted on the loop's own thread, on an
    /// `EmbeddedEventLoop` (whose `inEventLoop` is always true and whose `run()` runs what is
    /// queued, deterministically, on the test's thread).
    @Suite("NIOLoopLocalQueue")
    struct NIOLoopLocalQueueTests {
        @Test func workSubmittedOnTheLoopRunsInBatchesOfOneNIOTaskThatThenYieldToTheLoopsOtherTasks() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            let total = NIOLoopLocalQueue.batchSize + 500
            executor.submit { log.record("work 0") }
            // Queued behind the first drain: runs once that drain has run a whole batch.
            loop.execute { log.record("loop task") }
            for index in 1..<total {
                executor.submit { log.record("work \(index)") }
            }
            #expect(log.values.isEmpty)
            loop.run()
            let values = log.values
            // One NIO task ran a whole batch before the loop's other task; then the rest.
            #expect(values.firstIndex(of: "loop task") == NIOLoopLocalQueue.batchSize)
            #expect(values.filter { $0 != "loop task" } == (0..<total).map { "work \($0)" })
            try loop.syncShutdownGracefully()
        }

        @Test func callbacksChainedOnTheLoopRunInSubmissionOrderAfterTheResolvingCall() throws {
            let loop = EmbeddedEventLoop()
            let log = Recorder<String>()
            let (head, resolver) = Promise<Int, Never>.makeWithResolver()
            let tail = head.map(on: .nio(loop)) { value -> Int in
                log.record("map \(value)")
                return value + 1
            }
            tail.tap(on: .nio(loop)) { result in log.record("tap \(result.value ?? -1)") }
            resolver.fulfill(with: 1)
            log.record("fulfill returned")
            loop.run()
            #expect(log.values == ["fulfill returned", "map 1", "tap 2"])
            try loop.syncShutdownGracefully()
        }

        @Test func aJobQueuedWhenTheLoopDropsTheDrainIsAbandonedAndItsPromiseCancelled() throws {
            let loop = EmbeddedEventLoop()
            try loop.syncShutdownGracefully()
            // The loop is shut down but still "current" (embedded): the job joins the local queue,
            // the loop drops the drain, and the drain's ticket abandons the job.
            let promise = Promise<Int, Never>(fulfilled: 1).map(on: .nio(loop)) { $0 + 1 }
            #expect(promise.result?.isCancelled == true)
            var tracked: Tracked? = Tracked()
            let watched = WeakReference(tracked!)
            NIOEventLoopExecutor.shared(for: loop).submit { [tracked] in _ = tracked }
            tracked = nil
            #expect(watched.object == nil)
            withExtendedLifetime(loop) {}
        }

        @Test func aDrainThatRanWorkQueuesTheNextDrainAtOnceSoWorkFromATaskItQueuedRunsBeforeThatTasksOwnTasks() throws
        {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            executor.submit {
                log.record("work")
                loop.execute {
                    log.record("task X")
                    // Queued behind the drain that the first drain queued when it ended.
                    loop.execute { log.record("task Z") }
                    // Joins that pending drain: runs before task Z.
                    executor.submit { log.record("work from X") }
                }
                loop.execute { log.record("task Y") }
            }
            loop.run()
            #expect(log.values == ["work", "task X", "task Y", "work from X", "task Z"])
            try loop.syncShutdownGracefully()
        }

        @Test func aDrainTicketWhoseDrainRanServesTheNextDrainInsteadOfANewAllocation() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            executor.submit { log.record("first") }
            loop.run()
            let spare = executor.local.spareTicketIdentity
            #expect(spare != nil)
            executor.submit { log.record("second") }
            // Taken out of the spare slot while its drain is queued.
            #expect(executor.local.spareTicketIdentity == nil)
            loop.run()
            #expect(executor.local.spareTicketIdentity == spare)
            #expect(log.values == ["first", "second"])
            try loop.syncShutdownGracefully()
        }

        @Test func aReusedDrainTicketStillAbandonsTheJobWhenTheLoopDropsItsDrain() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            executor.submit { log.record("ran") }
            loop.run()
            #expect(executor.local.spareTicketIdentity != nil)
            try loop.syncShutdownGracefully()
            // The spare ticket serves the drain that the shut-down loop drops.
            let promise = Promise<Int, Never>(fulfilled: 1).map(on: .nio(loop)) { $0 + 1 }
            #expect(promise.result?.isCancelled == true)
            #expect(log.values == ["ran"])
        }

        @Test func aJobQueuedBehindADrainThatTheClosingLoopDroppedIsAbandonedWhenTheLoopReleasesTheDrain() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            let (head, resolver) = Promise<Int, Never>.makeWithResolver()
            let mapped = head.map(on: .nio(loop)) { value -> Int in
                log.record("map")
                return value + 1
            }
            executor.submit { log.record("work") }
            loop.execute { resolver.fulfill(with: 1) }
            // Shutting down runs both tasks: the drain runs "work" and queues the next drain with
            // the same ticket, which the closing loop drops while it still holds the running one;
            // the job then joins the queue, and is abandoned once the loop releases the old drain.
            try loop.syncShutdownGracefully()
            #expect(log.values == ["work"])
            #expect(mapped.result?.isCancelled == true)
        }

        @Test func drainsAreThreadBoundOnAMultiThreadedEventLoopGroupLoopAndTakeATicketOnOtherLoops() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                // The route is the loop thread's state: read it there.
                let undecided = try await loop.submit { executor.local.drainsAreThreadBound }.get()
                #expect(undecided == nil)
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                // From the loop's thread: the local queue's first drain decides.
                loop.execute { executor.submit { finish.fulfill(with: ()) } }
                _ = await waitForResult(done)
                let decided = try await loop.submit { executor.local.drainsAreThreadBound }.get()
                #expect(decided == true)
            }
            let embedded = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: embedded)
            executor.submit {}
            embedded.run()
            #expect(executor.local.drainsAreThreadBound == false)
            #expect(executor.local.spareTicketIdentity != nil)
            try await embedded.shutdownGracefully()
        }

        @Test func aThreadBoundDrainChainRunsFlatMapLinksFulfilledByOtherNIOTasksInOrderAndEndsOnceIdle() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                let (head, resolver) = Promise<Int, Never>.makeWithResolver()
                var promise = head
                for _ in 0..<100 {
                    promise = promise.flatMap(on: .nio(loop)) { value in
                        // From the loop's thread, between two drains: the chain is bound to it.
                        log.record("bound \(executor.local.isBoundToCurrentThread)")
                        let (link, linkResolver) = Promise<Int, Never>.makeWithResolver()
                        loop.execute {
                            log.record("task bound \(executor.local.isBoundToCurrentThread)")
                            linkResolver.fulfill(with: value + 1)
                        }
                        return link
                    }
                }
                loop.execute { resolver.fulfill(with: 0) }
                #expect(await waitForResult(promise)?.value == 100)
                #expect(log.values == Array(repeating: ["bound true", "task bound true"], count: 100).flatMap { $0 })
                // Not bound on another thread, even while the chain may still be active.
                #expect(!executor.local.isBoundToCurrentThread)
                // The drain queued after the last link finds nothing and ends the chain; a task
                // queued from a task queued now runs after that drain.
                let boundAfterIdle = try await loop.submit {
                    loop.submit { executor.local.isBoundToCurrentThread }
                }.get().get()
                #expect(!boundAfterIdle)
                // Work submitted later starts a new chain on the same route.
                let (again, finish) = Promise<Void, Never>.makeWithResolver()
                loop.execute { executor.submit { finish.fulfill(with: ()) } }
                _ = await waitForResult(again)
                let stillBound = try await loop.submit { executor.local.drainsAreThreadBound }.get()
                #expect(stillBound == true)
            }
        }

        @Test func onAMultiThreadedEventLoopGroupLoopWorkFromATaskADrainQueuedJoinsThePendingDrain() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                loop.execute {
                    executor.submit {
                        log.record("work")
                        loop.execute {
                            log.record("task X")
                            loop.execute {
                                log.record("task Z")
                                finish.fulfill(with: ())
                            }
                            executor.submit { log.record("work from X") }
                        }
                        loop.execute { log.record("task Y") }
                    }
                }
                _ = await waitForResult(done)
                #expect(log.values == ["work", "task X", "task Y", "work from X", "task Z"])
            }
        }

        @Test func aThreadBoundQueueOutlivesItsExecutorUntilItsDrainChainEnds() async throws {
            try await withNIOLoop { loop in
                let log = Recorder<String>()
                // An executor outside the shared table: the chain's NIO tasks hold no reference to
                // its queue, which must keep itself alive until the chain ends.
                var executor: NIOEventLoopExecutor? = NIOEventLoopExecutor(loop)
                let watched = WeakReference(executor!.local)
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                try await loop.submit { [executor] in
                    executor!.submit {
                        log.record("first")
                        loop.execute { log.record("task") }
                    }
                    executor!.submit { log.record("second") }
                }.get()
                executor = nil
                loop.execute {
                    loop.execute { finish.fulfill(with: ()) }
                }
                _ = await waitForResult(done)
                #expect(log.values == ["first", "second", "task"])
                #expect(await eventually { watched.object == nil })
            }
        }
    }
#endif
