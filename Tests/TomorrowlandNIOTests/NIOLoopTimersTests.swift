#if NIO
    import Foundation
    import NIOCore
    import NIOEmbedded
    import NIOPosix
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// The timers of `NIOEventLoopExecutor` (`NIOLoopTimers`): a heap of the executor's own, with one
    /// NIO scheduled callback armed for the earliest deadline.
    ///
    /// Ordering tests run on an `EmbeddedEventLoop`, whose clock is virtual (`advanceTime(by:)`), so
    /// that they are deterministic; thread and shutdown tests on a `MultiThreadedEventLoopGroup`.
    @Suite("NIOLoopTimers")
    struct NIOLoopTimersTests {
        @Test func timersWithEqualDeadlinesFireInSchedulingOrderInOneCallback() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            for name in ["a", "b", "c", "d"] {
                _ = executor.scheduleSelfGuarded(after: .milliseconds(10)) { log.record(name) }
            }
            _ = executor.schedule(after: .milliseconds(10)) { log.record("e") }
            // One NIO callback serves them all: the later ones have the same deadline.
            #expect(executor.timers.armedCallbackCount == 1)
            loop.advanceTime(by: .milliseconds(9))
            #expect(log.values.isEmpty)
            loop.advanceTime(by: .milliseconds(1))
            #expect(log.values == ["a", "b", "c", "d", "e"])
            #expect(executor.timers.count == 0)
            #expect(executor.timers.armedCallbackCount == 0)
            try loop.syncShutdownGracefully()
        }

        @Test func aLaterScheduledEarlierDeadlineArmsItsOwnCallbackAndFiresFirst() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            _ = executor.scheduleSelfGuarded(after: .milliseconds(30)) { log.record("30 ms") }
            _ = executor.scheduleSelfGuarded(after: .milliseconds(20)) { log.record("20 ms") }
            // Not earlier than the armed callback: no new one.
            _ = executor.scheduleSelfGuarded(after: .milliseconds(25)) { log.record("25 ms") }
            #expect(executor.timers.armedCallbackCount == 2)
            loop.advanceTime(by: .milliseconds(20))
            #expect(log.values == ["20 ms"])
            // The 20 ms callback found the 30 ms one still armed, later than the next timer (25 ms):
            // it armed one for 25 ms.
            #expect(executor.timers.armedCallbackCount == 2)
            loop.advanceTime(by: .milliseconds(5))
            #expect(log.values == ["20 ms", "25 ms"])
            loop.advanceTime(by: .milliseconds(5))
            #expect(log.values == ["20 ms", "25 ms", "30 ms"])
            #expect(executor.timers.count == 0)
            #expect(executor.timers.armedCallbackCount == 0)
            try loop.syncShutdownGracefully()
        }

        @Test func aCancelledEarliestTimerLeavesItsCallbackToFindNothingDueAndArmTheNext() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            let early = executor.scheduleSelfGuarded(after: .milliseconds(10)) { log.record("10 ms") }
            _ = executor.scheduleSelfGuarded(after: .milliseconds(40)) { log.record("40 ms") }
            early.cancel()
            #expect(executor.timers.count == 1)
            #expect(executor.timers.armedCallbackCount == 1)
            loop.advanceTime(by: .milliseconds(10))
            #expect(log.values.isEmpty)
            // The callback fired early, found nothing due, and armed one for 40 ms.
            #expect(executor.timers.armedCallbackCount == 1)
            loop.advanceTime(by: .milliseconds(30))
            #expect(log.values == ["40 ms"])
            try loop.syncShutdownGracefully()
        }

        @Test func aTimerScheduledByATimersWorkCountsItsDelayFromTheFiringAndRunsInDeadlineOrder() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            _ = executor.scheduleSelfGuarded(after: .milliseconds(10)) {
                log.record("first at \(loop.now.uptimeNanoseconds / 1_000_000)")
                _ = executor.scheduleSelfGuarded(after: .zero) { log.record("zero delay") }
                _ = executor.scheduleSelfGuarded(after: .milliseconds(5)) {
                    log.record("second at \(loop.now.uptimeNanoseconds / 1_000_000)")
                }
            }
            _ = executor.scheduleSelfGuarded(after: .milliseconds(10)) { log.record("same deadline") }
            loop.advanceTime(by: .milliseconds(20))
            #expect(log.values == ["first at 10", "same deadline", "zero delay", "second at 15"])
            try loop.syncShutdownGracefully()
        }

        @Test func cancellingOnTheLoopsThreadRemovesTheTimerAndReleasesItsWorkAtOnce() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            var guarded: Tracked? = Tracked()
            var plain: Tracked? = Tracked()
            let watchedGuarded = WeakReference(guarded!)
            let watchedPlain = WeakReference(plain!)
            let guardedHandle = executor.scheduleSelfGuarded(after: .seconds(1)) { [guarded] in
                _ = guarded
                log.record("self-guarded ran")
            }
            let plainHandle = executor.schedule(after: .seconds(1)) { [plain] in
                _ = plain
                log.record("plain ran")
            }
            guarded = nil
            plain = nil
            #expect(executor.timers.count == 2)
            guardedHandle.cancel()
            plainHandle.cancel()
            #expect(watchedGuarded.object == nil)
            #expect(watchedPlain.object == nil)
            #expect(executor.timers.count == 0)
            guardedHandle.cancel()
            plainHandle.cancel()
            loop.advanceTime(by: .seconds(2))
            #expect(log.values.isEmpty)
            try loop.syncShutdownGracefully()
        }

        @Test func cancellingFromAnotherThreadReleasesTheWorkOnTheLoopAndKeepsPlainWorkFromStarting() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                var guarded: Tracked? = Tracked()
                var plain: Tracked? = Tracked()
                let watchedGuarded = WeakReference(guarded!)
                let watchedPlain = WeakReference(plain!)
                // Scheduled on the loop's thread, cancelled from this one.
                let handles = try await loop.submit { [guarded, plain] in
                    (
                        executor.scheduleSelfGuarded(after: .seconds(3600)) { [guarded] in
                            _ = guarded
                            log.record("self-guarded ran")
                        },
                        executor.schedule(after: .seconds(3600)) { [plain] in
                            _ = plain
                            log.record("plain ran")
                        }
                    )
                }.get()
                guarded = nil
                plain = nil
                #expect(loop.inEventLoop == false)
                handles.0.cancel()
                handles.1.cancel()
                #expect(await eventually { watchedGuarded.object == nil && watchedPlain.object == nil })
                let remaining = try await loop.submit { executor.timers.count }.get()
                #expect(remaining == 0)
                // A plain timer cancelled from another thread as it comes due: either the cancel
                // claimed the handle first and the work never starts, or the work claimed it first
                // and runs once. (The work cannot tell by itself when it started: a first version
                // read a flag the test set after `cancel()` returned, and failed under
                // ThreadSanitizer when the loop's thread was preempted between its claim and that
                // read.)
                var cancelledFirst = 0
                for _ in 0..<200 {
                    let started = Recorder<Bool>()
                    let handle = executor.schedule(after: .zero) { started.record(true) }
                    handle.cancel()
                    let cancelWon = try #require(handle as? NIOLoopTimerHandle).wasCancelledBeforeStarting
                    try await drain(loop)
                    #expect(started.count == (cancelWon ? 0 : 1))
                    if cancelWon { cancelledFirst += 1 }
                }
                // Cancelled before the loop got to most of them.
                #expect(cancelledFirst > 0)
                #expect(log.values.isEmpty)
            }
        }

        @Test func timersScheduledFromAnotherThreadRunOnTheLoopOrReleaseTheirWorkIfCancelledFirst() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let log = Recorder<String>()
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                var cancelledEarly: Tracked? = Tracked()
                let watchedCancelled = WeakReference(cancelledEarly!)
                _ = executor.scheduleSelfGuarded(after: .milliseconds(20)) {
                    log.record("20 ms on the loop \(loop.inEventLoop)")
                    finish.fulfill(with: ())
                }
                _ = executor.schedule(after: .milliseconds(5)) { log.record("5 ms on the loop \(loop.inEventLoop)") }
                let cancelled = executor.scheduleSelfGuarded(after: .milliseconds(1)) { [cancelledEarly] in
                    _ = cancelledEarly
                    log.record("cancelled timer ran")
                }
                cancelledEarly = nil
                cancelled.cancel()
                _ = await waitForResult(done)
                #expect(log.values == ["5 ms on the loop true", "20 ms on the loop true"])
                #expect(await eventually { watchedCancelled.object == nil })
                let remaining = try await loop.submit { executor.timers.count }.get()
                #expect(remaining == 0)
            }
        }

        @Test func shuttingTheLoopDownReleasesPendingTimersAndTheirTimeoutsEndCancelled() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            let (pending, resolver) = Promise<Int, TestError>.makeWithResolver()
            var tracked: Tracked? = Tracked()
            let watched = WeakReference(tracked!)
            // Armed on the loop's thread: straight into the executor's heap.
            let (timeout, delayed) = try await loop.submit { [tracked] in
                _ = executor.scheduleSelfGuarded(after: .seconds(3600)) { [tracked] in
                    _ = tracked
                    log.record("timer ran")
                }
                return (
                    pending.timeout(on: .nio(loop), delay: .seconds(3600)),
                    Promise<Int, TestError>(fulfilled: 1).delay(on: .nio(loop), .seconds(3600))
                )
            }.get()
            tracked = nil
            // The timer and the timeout's, at least (the delay's may still be on its way).
            let remaining = try await loop.submit { executor.timers.count }.get()
            #expect(remaining >= 2)
            try await group.shutdownGracefully()
            #expect(await waitForResult(timeout)?.isCancelled == true)
            #expect(await waitForResult(delayed)?.isCancelled == true)
            #expect(await eventually { watched.object == nil })
            #expect(log.values.isEmpty)
            resolver.cancel()
        }

        @Test func shuttingAnEmbeddedLoopDownReleasesPendingTimersUnrun() throws {
            let loop = EmbeddedEventLoop()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let log = Recorder<String>()
            var tracked: Tracked? = Tracked()
            let watched = WeakReference(tracked!)
            _ = executor.scheduleSelfGuarded(after: .seconds(10)) { [tracked] in
                _ = tracked
                log.record("timer ran")
            }
            tracked = nil
            try loop.syncShutdownGracefully()
            #expect(watched.object == nil)
            #expect(executor.timers.count == 0)
            #expect(executor.timers.armedCallbackCount == 0)
            #expect(log.values.isEmpty)
        }

        @Test func aTimerThatKeepsReschedulingItselfWithZeroDelayLetsTheLoopsOtherTasksRun() async throws {
            try await withNIOLoop { loop in
                let executor = NIOEventLoopExecutor.shared(for: loop)
                let firings = Recorder<Int>()
                let seenByATask = Recorder<Int>()
                let (done, finish) = Promise<Void, Never>.makeWithResolver()
                // Stops by itself after 20,000 firings, so that a loop it starved still ends the test.
                @Sendable func again() {
                    firings.record(1)
                    let count = firings.values.count
                    if count == 1 {
                        // A NIO task queued by the first firing: it runs after one batch of firings
                        // at most.
                        loop.execute { seenByATask.record(firings.values.count) }
                    }
                    if count < 20_000 {
                        _ = executor.scheduleSelfGuarded(after: .zero, again)
                    } else {
                        finish.fulfill(with: ())
                    }
                }
                try await loop.submit { _ = executor.scheduleSelfGuarded(after: .zero, again) }.get()
                _ = await waitForResult(done)
                let firingsSeenByATask = seenByATask.values.first ?? -1
                #expect(firingsSeenByATask > 0)
                #expect(firingsSeenByATask <= NIOLoopTimers.batchSize)
            }
        }
    }
#endif
