#if NIO
    import NIOCore
    import NIOEmbedded
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO

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
    }
#endif
