#if NIO
    import Foundation
    import NIOCore
    import NIOPosix
    import Synchronization
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// Stall detection runs on real time (a watchdog thread against a NIO loop blocked by
    /// `usleep`), so these tests use long stalls and generous bounds: what they check is who
    /// reports, what, and when relative to the stalled work, never a tight duration.
    @Suite("NIOEventLoopExecutor stall detection")
    struct NIOStallDetectionTests {
        /// What a test's report handler saw.
        private final class Reports: Sendable {
            let stalls = Recorder<LoopStall>()
            /// Whether the stalled work had returned when each report came.
            let reportedBeforeReturn = Recorder<Bool>()
            let workReturned = Atomic<Bool>(false)
            private let reported = DispatchSemaphore(value: 0)

            func record(_ stall: LoopStall) {
                reportedBeforeReturn.record(!workReturned.load(ordering: .acquiring))
                stalls.record(stall)
                reported.signal()
            }

            /// The stalled work's body: holds the loop 200 ms, then on until the watchdog
            /// reported, within a generous bound. On a loaded machine (CI under
            /// ThreadSanitizer) the watchdog's thread may not get a core within 200 ms, which
            /// says nothing about the detection; past the bound, the loop's own report after
            /// the work fails the checks on `reportedBeforeReturn`.
            func stall() {
                usleep(200_000)
                // Until a report is recorded, not until the semaphore says so (as the EventLoop
                // test: under ThreadSanitizer on a loaded machine a timed wait once returned
                // early there, with no report).
                let deadline = ContinuousClock.now + generousTimeout
                while stalls.count == 0, ContinuousClock.now < deadline {
                    _ = reported.wait(timeout: .now() + .milliseconds(100))
                }
                workReturned.store(true, ordering: .releasing)
            }

            /// Checks one report, made by the watchdog while the work still ran, with the 50 ms
            /// threshold.
            func expectOneReportWhileRunning(sourceLocation: SourceLocation = #_sourceLocation) -> LoopStall? {
                #expect(stalls.count == 1, sourceLocation: sourceLocation)
                #expect(reportedBeforeReturn.values == [true], sourceLocation: sourceLocation)
                let stall = stalls.values.first
                #expect(stall?.isFinished == false, sourceLocation: sourceLocation)
                #expect((stall?.duration ?? .zero) >= .milliseconds(50), sourceLocation: sourceLocation)
                #expect(stall?.threshold == .milliseconds(50), sourceLocation: sourceLocation)
                #expect(stall?.loopKind == "NIO loop", sourceLocation: sourceLocation)
                #expect(stall?.description.hasPrefix("NIO loop stall: ") == true, sourceLocation: sourceLocation)
                #expect(
                    stall?.description.hasSuffix("(threshold 50.0 ms), still running") == true,
                    sourceLocation: sourceLocation)
                return stall
            }
        }

        @Test func aPromiseCallbackThatBlocksTheLoopFor200msIsReportedNamedWhileItStillRuns() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let reports = Reports()
            executor.enableStallDetection(threshold: .milliseconds(50)) { reports.record($0) }
            // Registered from this thread on a fulfilled promise: the callback reaches the loop
            // through its `execute`, as one promise job.
            let mapped = Promise<Int, TestError>(fulfilled: 1).map(on: .nio(loop)) { value -> Int in
                reports.stall()
                return value + 1
            }
            #expect(await waitForResult(mapped) == .value(2))
            let stall = reports.expectOneReportWhileRunning()
            // Named by its kind and types.
            #expect(stall?.work.hasPrefix("promise callback (") == true)
            #expect(executor.tickTotals.stallCount == 1)
            try await group.shutdownGracefully()
        }

        @Test func aClosureQueuedOnTheLoopThatBlocksItIsReportedByItsSymbol() throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let reports = Reports()
            executor.enableStallDetection(threshold: .milliseconds(50)) { reports.record($0) }
            let done = DispatchSemaphore(value: 0)
            // Submitted on the loop's thread: the closure joins the executor's FIFO and runs in
            // one of its drains.
            loop.execute {
                executor.submit {
                    reports.stall()
                    done.signal()
                }
            }
            done.wait()
            let stall = reports.expectOneReportWhileRunning()
            // Named by its symbol: the closure literal inside this test.
            #expect(stall?.work.hasPrefix("closure") == true)
            #expect(stall?.work.contains("aClosureQueuedOnTheLoopThatBlocksItIsReportedByItsSymbol") == true)
            try group.syncShutdownGracefully()
        }

        @Test func aTimerThatBlocksTheLoopIsReportedWhileItStillRuns() throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let reports = Reports()
            executor.enableStallDetection(threshold: .milliseconds(50)) { reports.record($0) }
            let done = DispatchSemaphore(value: 0)
            _ = executor.schedule(after: .milliseconds(1)) {
                reports.stall()
                done.signal()
            }
            done.wait()
            let stall = reports.expectOneReportWhileRunning()
            // Named by the executor's closure around the work (it checks the timer's handle
            // first), which `schedule(after:_:)` names.
            #expect(stall?.work.hasPrefix("closure") == true)
            #expect(stall?.work.contains("NIOEventLoopExecutor.schedule(after:") == true)
            try group.syncShutdownGracefully()
        }

        @Test func aCallbackOf10msIsNotReportedWithThe50msThreshold() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            let stalls = Recorder<LoopStall>()
            executor.enableStallDetection { stalls.record($0) }
            // How long the callback's job held the loop, at most: from the callback's start to
            // the start of a NIO task it queues, so that the executor's bookkeeping after the
            // callback counts too (a thread preempted there holds the loop as surely).
            let held = Locked<Duration>(.zero)
            let measured = Promise<Void, Never>.makeWithResolver()
            let mapped = Promise<Int, TestError>(fulfilled: 1).map(on: .nio(loop)) { value -> Int in
                let start = ContinuousClock.now
                usleep(10_000)
                loop.execute {
                    held.withLock { $0 = ContinuousClock.now - start }
                    measured.1.fulfill(with: ())
                }
                return value
            }
            #expect(await waitForResult(mapped) == .value(1))
            #expect(await waitForResult(measured.0) != nil)
            // Leave the watchdog several thresholds to look (it would report a stall still running).
            usleep(200_000)
            let heldFor = held.withLock { $0 }
            if heldFor < .milliseconds(40) {
                #expect(stalls.count == 0, "a callback that held the loop \(heldFor) was reported")
            } else {
                // A loaded machine preempted the loop's thread in or around the callback, so it
                // held the loop past the threshold: a report is then right, and must say so.
                #expect(stalls.values.allSatisfy { $0.duration >= .milliseconds(50) })
            }
            executor.disableStallDetection()
            try await group.shutdownGracefully()
        }

        @Test func stallDetectionIsOffByDefaultAndDisablingStopsTheWatchdog() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            // Off: the executor's paths see one flag down, and no watchdog exists.
            #expect(!executor.monitor.isActiveForTests)
            executor.enableStallDetection { _ in }
            #expect(executor.monitor.isActiveForTests)
            #expect(executor.monitor.watchdogForTests != nil)
            executor.disableStallDetection()
            #expect(!executor.monitor.isActiveForTests)
            #expect(executor.monitor.watchdogForTests == nil)
            try await group.shutdownGracefully()
        }

        @Test func theLoopsShutdownStopsTheWatchdog() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let executor = NIOEventLoopExecutor.shared(for: group.next())
            executor.enableStallDetection { _ in }
            #expect(executor.monitor.watchdogForTests != nil)
            try await group.shutdownGracefully()
            // NIO cancels the callback armed at the distant future when the loop shuts down, and
            // releases it: the release closes the monitor.
            #expect(await eventually { executor.monitor.watchdogForTests == nil && executor.monitor.isClosedForTests })
            // Turning it on again does nothing once the loop shut down.
            executor.enableStallDetection { _ in }
            #expect(executor.monitor.watchdogForTests == nil)
        }
    }
#endif
