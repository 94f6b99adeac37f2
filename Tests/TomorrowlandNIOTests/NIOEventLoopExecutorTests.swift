#if NIO
    import Foundation
    import NIOCore
    import NIOEmbedded
    import NIOPosix
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO
    import TomorrowlandTestSupport

    @Suite("NIOEventLoopExecutor")
    struct NIOEventLoopExecutorTests {
        @Test func oneExecutorServesEveryUseOfALoop() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            let loops = Array(group.makeIterator())
            let first = loops[0], second = loops[1]
            let executor = NIOEventLoopExecutor.shared(for: first)
            #expect(NIOEventLoopExecutor.shared(for: first) === executor)
            #expect(PromiseContext.nio(first) == PromiseContext.nio(first))
            #expect(NIOEventLoopExecutor.shared(for: second) !== executor)
            #expect(executor.eventLoop === first)
            try await group.shutdownGracefully()
        }

        @Test func theTableDoesNotKeepLoopsAliveAndDropsTheirEntries() {
            let before = NIOEventLoopExecutorTable.shared.count
            var executors: [WeakReference<NIOEventLoopExecutor>] = []
            for _ in 0..<200 {
                let loop = EmbeddedEventLoop()
                let executor = NIOEventLoopExecutor.shared(for: loop)
                #expect(executor.eventLoop === loop)
                executors.append(WeakReference(executor))
                try? loop.syncShutdownGracefully()
            }
            // 200 loops came and went; the table swept the dead ones as it grew.
            #expect(NIOEventLoopExecutorTable.shared.count < before + 64)
            #expect(executors.filter { $0.object != nil }.count < 64)
        }

        @Test func anExecutorWhoseLoopIsGoneAbandonsJobsAndReleasesWork() async {
            let executor = NIOEventLoopExecutor.shared(for: EmbeddedEventLoop())
            #expect(executor.eventLoop == nil)
            #expect(!executor.isCurrent)
            let promise = Promise<Int, TestError>(fulfilled: 1).map(on: .executor(executor)) { $0 + 1 }
            #expect(await waitForResult(promise)?.isCancelled == true)
            var tracked: Tracked? = Tracked()
            let watched = WeakReference(tracked!)
            executor.submit { [tracked] in _ = tracked }
            _ = executor.schedule(after: .zero) { [tracked] in _ = tracked }
            tracked = nil
            #expect(watched.object == nil)
        }

        @Test func workRunsOnTheLoopInSubmissionOrderNeverInsideTheSubmittingCall() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                try await loop.submit {
                    for index in 0..<3 {
                        executor.submit { log.record("work \(index) current \(executor.isCurrent)") }
                    }
                    log.record("submitter returned")
                }.get()
                for index in 3..<5 { executor.submit { log.record("work \(index) current \(executor.isCurrent)") } }
                try await drain(loop)
                #expect(
                    log.values == [
                        "submitter returned", "work 0 current true", "work 1 current true", "work 2 current true",
                        "work 3 current true", "work 4 current true",
                    ])
                #expect(!executor.isCurrent)
            }
        }

        @Test func promiseCallbacksOnTheContextRunOnTheLoopsThread() async throws {
            try await withNIOLoop { loop in
                let promise = Promise<Int, TestError>(fulfilled: 20)
                    .map(on: .nio(loop)) { value -> Int in
                        loop.preconditionInEventLoop()
                        return value + 1
                    }
                    .flatMap(on: .nio(loop)) { value in
                        Promise<Int, TestError>(on: .nio(loop)) { resolver in
                            resolver.fulfill(with: value * 2)
                        }
                    }
                #expect(await waitForResult(promise)?.value == 42)
            }
        }

        @Test func callbacksOfOneResolutionOnTheLoopTakeOneEntryOfTheLocalFIFOAndRunInRegistrationOrder() throws {
            let loop = EmbeddedEventLoop()
            let log = Recorder<String>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            // One more tap than a drain runs items: one by one, the last tap would wait for a
            // second drain, behind the loop's task queued below; as one batch it runs in the first.
            let taps = NIOLoopLocalQueue.batchSize + 1
            for index in 0..<taps {
                promise.tap(on: .nio(loop)) { result in log.record("tap \(index) \(result.value ?? -1)") }
            }
            resolver.fulfill(with: 7)
            loop.execute { log.record("loop task") }
            #expect(log.values.isEmpty, "callbacks never run inside the resolving call")
            loop.run()
            let values = log.values
            #expect(values.firstIndex(of: "loop task") == taps, "the taps ran in one drain, before the loop's task")
            #expect(values.filter { $0 != "loop task" } == (0..<taps).map { "tap \($0) 7" })
            try loop.syncShutdownGracefully()
        }

        @Test func loopBoundStateOnTheExecutorIsReachableInsideTheLoopsWork() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let counter = LoopBound(0, on: executor)
                #expect(!executor.isCurrent)
                let value = try await loop.submit {
                    counter.withValue { $0 += 41 }
                    return counter.value + 1
                }.get()
                #expect(value == 42)
                // A callback on the loop's context is the loop's work too.
                let read = await waitForResult(
                    Promise<Int, Never>(fulfilled: 1).map(on: .nio(loop)) { $0 + counter.value })
                #expect(read?.value == 42)
            }
        }

        @Test func aCallbackAimedAtALoopThatWasShutDownIsAbandonedAndItsPromiseCancelled() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            try await group.shutdownGracefully()
            // NIO prints "Cannot schedule tasks on an EventLoop that has already shut down" here.
            let promise = Promise<Int, TestError>(fulfilled: 1).map(on: .nio(loop)) { $0 + 1 }
            #expect(await waitForResult(promise)?.isCancelled == true)
        }

        @Test func timersRunInDeadlineOrderOnTheLoop() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                _ = executor.schedule(after: .milliseconds(30)) {
                    log.record("30 ms current \(executor.isCurrent)")
                    finish.fulfill(with: ())
                }
                _ = executor.schedule(after: .milliseconds(10)) { log.record("10 ms current \(executor.isCurrent)") }
                _ = executor.schedule(after: .zero) { log.record("0 ms current \(executor.isCurrent)") }
                _ = await waitForResult(done)
                #expect(log.values == ["0 ms current true", "10 ms current true", "30 ms current true"])
            }
        }

        @Test func cancellingATimerKeepsItsWorkFromRunningAndReleasesIt() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                var tracked: Tracked? = Tracked()
                let watched = WeakReference(tracked!)
                let handle = executor.schedule(after: .milliseconds(20)) { [tracked] in
                    _ = tracked
                    log.record("cancelled timer ran")
                }
                tracked = nil
                handle.cancel()
                // Cancelled from another thread: the work cannot start any more, and the loop
                // releases it (the cancel hops there to remove the timer).
                #expect(await eventually { watched.object == nil })
                handle.cancel()
                // A timer cancelled from the loop's thread, before its deadline. Its deadline is far
                // enough that no loaded machine reaches it before the hop to the loop does (at 10 ms
                // an ASan run under load fired it first); the 40 ms timer below still ends the test.
                let onLoop = executor.schedule(after: .seconds(30)) { log.record("cancelled on loop ran") }
                try await loop.submit { onLoop.cancel() }.get()
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                _ = executor.schedule(after: .milliseconds(40)) { finish.fulfill(with: ()) }
                _ = await waitForResult(done)
                #expect(log.values.isEmpty)
            }
        }

        @Test func timersPendingAtShutdownAndTimersScheduledAfterItReleaseTheirWorkUnrun() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let executor = NIOEventLoopExecutor.shared(for: group.next())
            let log = Recorder<String>()
            var pending: Tracked? = Tracked()
            let watchedPending = WeakReference(pending!)
            _ = executor.schedule(after: .seconds(3600)) { [pending] in
                _ = pending
                log.record("pending timer ran")
            }
            pending = nil
            try await group.shutdownGracefully()
            #expect(await eventually { watchedPending.object == nil })
            var late: Tracked? = Tracked()
            let watchedLate = WeakReference(late!)
            let handle = executor.schedule(after: .zero) { [late] in
                _ = late
                log.record("late timer ran")
            }
            late = nil
            #expect(watchedLate.object == nil)
            handle.cancel()
            #expect(log.values.isEmpty)
        }

        @Test func timeoutsArmedBeforeOrAfterTheLoopShutsDownEndCancelledInsteadOfPending() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let (pending, resolver) = Promise<Int, TestError>.makeWithResolver()
            let armedBefore = pending.timeout(on: .nio(loop), delay: .seconds(3600))
            try await drain(loop)
            try await group.shutdownGracefully()
            // NIO drops the late timer without calling or cancelling it; dropping it must count.
            let armedAfter = pending.timeout(on: .nio(loop), delay: .seconds(3600))
            #expect(await waitForResult(armedBefore)?.isCancelled == true)
            #expect(await waitForResult(armedAfter)?.isCancelled == true)
            resolver.cancel()
        }

        @Test func timeoutAndDelayRunOnTheLoopsClock() async throws {
            try await withNIOLoop { loop in
                let (pending, resolver) = Promise<Int, TestError>.makeWithResolver()
                let timedOut = pending.timeout(on: .nio(loop), delay: .milliseconds(10))
                let result = await waitForResult(timedOut)
                guard case .error(.timedOut)? = result else {
                    Issue.record("expected a timeout, got \(String(describing: result))")
                    return
                }
                let start = ContinuousClock.now
                let delayed = Promise<Int, TestError>(fulfilled: 7).delay(on: .nio(loop), .milliseconds(20))
                    .map(on: .nio(loop)) { value -> Int in
                        loop.preconditionInEventLoop()
                        return value
                    }
                #expect(await waitForResult(delayed)?.value == 7)
                #expect(ContinuousClock.now - start >= .milliseconds(20))
                resolver.cancel()
            }
        }

        @Test func durationsConvertToNIOTimeAmountsClamped() {
            #expect(Duration.milliseconds(1500).nioTimeAmount == .milliseconds(1500))
            #expect(Duration.nanoseconds(-5).nioTimeAmount == .nanoseconds(-5))
            #expect(Duration.seconds(Int64.max).nioTimeAmount == .nanoseconds(.max))
            #expect(Duration.seconds(Int64.min).nioTimeAmount == .nanoseconds(.min))
        }
    }
#endif
