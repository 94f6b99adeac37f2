#if Metrics && NIO
    import CoreMetrics
    import Foundation
    import MetricsTestKit
    import NIOCore
    import NIOPosix
    import Synchronization
    import Testing
    import Tomorrowland
    import TomorrowlandMetrics
    import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// Known work on a real `MultiThreadedEventLoopGroup` whose metrics delegate is a
    /// `NIOLoopMetricsDelegate`, each metric read back from MetricsTestKit's `TestMetrics`.
    @Suite("NIO loop metrics")
    struct NIOLoopMetricsDelegateTests {
        private let labels = LoopMetrics.Labels(prefix: "tomorrowland_nio_loop")

        /// A metrics delegate of a test's own, to check forwarding.
        private final class CountingDelegate: NIOEventLoopMetricsDelegate {
            let ticks = Atomic<Int>(0)

            func processedTick(info: NIOEventLoopTickInfo) {
                ticks.wrappingAdd(1, ordering: .relaxed)
            }
        }

        /// Runs a task on `loop` and waits until the tick that ran it was recorded: the loop's
        /// metrics exist after it, its stall detection is on, and what the test runs next is
        /// recorded after the values there are now.
        private static func warmUp(
            _ loop: any EventLoop, _ metrics: NIOLoopMetricsDelegate, _ testMetrics: TestMetrics
        ) -> Bool {
            let ran = DispatchSemaphore(value: 0)
            loop.execute { ran.signal() }
            ran.wait()
            return waitUntil {
                guard let name = metrics.loopNames.first,
                    let items = try? testMetrics.expectRecorder(metrics.labels.tickItems, [("loop", name)])
                else { return false }
                return !items.values.isEmpty
            }
        }

        @Test func eachTickRecordsItsFiguresUnderTheLoopsThreadNameWithPromiseCallbacksCountedOneByOne() throws {
            let testMetrics = TestMetrics()
            let forwarded = CountingDelegate()
            let metrics = NIOLoopMetricsDelegate(factory: testMetrics, forwardingTo: forwarded)
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1, metricsDelegate: metrics)
            defer { try? group.syncShutdownGracefully() }
            let loop = group.next()
            try #require(Self.warmUp(loop, metrics, testMetrics))

            // NIO names its threads `NIO-ELT-<group>-#<index>`.
            let name = try #require(metrics.loopNames.first)
            #expect(metrics.loopNames == [name])
            // One LoopMetrics per loop, named and labelled as the delegate's.
            #expect(metrics.metrics.map(\.name) == [name])
            #expect(metrics.metrics.first?.labels == metrics.labels)
            #expect(name.hasPrefix("NIO-ELT-") && name.contains("-#"), "\(name)")
            let dimensions = [("loop", name)]
            let items = try testMetrics.expectRecorder(labels.tickItems, dimensions)
            #expect(items.aggregate)
            let before = items.values.count

            // One NIO task fulfils 30 promises, each with one callback on `.nio(loop)`: 31 pieces
            // of work (the task and the 30 callbacks one drain runs), where NIO counts three tasks.
            let pairs = (0..<30).map { _ in Promise<Int, Never>.makeWithResolver() }
            let callbacks = pairs.map { promise, _ in promise.map(on: .nio(loop)) { $0 * 2 } }
            let resolvers = pairs.map(\.1)
            loop.execute {
                for resolver in resolvers { resolver.fulfill(with: 21) }
            }
            #expect(waitUntil { callbacks.allSatisfy { $0.result?.value == 42 } })
            #expect(waitUntil { items.values.dropFirst(before).reduce(0, +) >= 31 })
            #expect(items.values.dropFirst(before).reduce(0, +) == 31)

            // Every tick records both durations before its items: as many of each.
            let tickDurations = try testMetrics.expectTimer(labels.tickDuration, dimensions).values
            let waitDurations = try testMetrics.expectTimer(labels.waitDuration, dimensions).values
            let recordedItems = items.values
            #expect(tickDurations.count >= recordedItems.count)
            #expect(waitDurations.count >= recordedItems.count)
            #expect(tickDurations.allSatisfy { $0 >= 0 })
            #expect(try testMetrics.expectCounter(labels.stalls, dimensions).totalValue == 0)
            // No queued-work gauge: a NIO tick ends with nothing of the loop's queued.
            #expect(throws: (any Error).self) { try testMetrics.expectGauge(labels.queuedWork, dimensions) }
            #expect(forwarded.ticks.load(ordering: .relaxed) >= recordedItems.count)
        }

        @Test func armedTimersCountTheExecutorsTimersUntilCancelled() throws {
            let testMetrics = TestMetrics()
            let metrics = NIOLoopMetricsDelegate(factory: testMetrics)
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1, metricsDelegate: metrics)
            defer { try? group.syncShutdownGracefully() }
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            try #require(Self.warmUp(loop, metrics, testMetrics))
            let name = try #require(metrics.loopNames.first)
            let armed = try testMetrics.expectGauge(labels.armedTimers, [("loop", name)])

            let timers = try loop.submit { (0..<4).map { _ in executor.schedule(after: .seconds(3600)) {} } }.wait()
            #expect(waitUntil { armed.lastValue == 4 })
            try loop.submit {
                timers[0].cancel()
                timers[1].cancel()
            }.wait()
            #expect(waitUntil { armed.lastValue == 2 })
            // A promise timeout is one of the executor's timers too, until the promise resolves.
            let (pending, resolver) = Promise<Int, Never>.makeWithResolver()
            let timedOut = pending.timeout(on: .nio(loop), delay: 3600)
            #expect(waitUntil { armed.lastValue == 3 })
            resolver.fulfill(with: 1)
            #expect(waitUntil { timedOut.result != nil })
            #expect(timedOut.result?.value == 1)
            #expect(waitUntil { armed.lastValue == 2 })
        }

        /// A one-loop group whose metrics detect stalls at 200 ms and record each stall report
        /// and each tick, warmed up: the loop's metrics exist. The threshold is far above the
        /// preemptions of a loaded machine, so that only the tests' own blocking work stalls.
        private struct StallWatchedLoop {
            let testMetrics = TestMetrics()
            let reported = Recorder<LoopStall>()
            let ticks = Recorder<LoopTick>()
            let metrics: NIOLoopMetricsDelegate
            let group: MultiThreadedEventLoopGroup
            let executor: NIOEventLoopExecutor
            /// The loop's dimension.
            let dimensions: [(String, String)]

            init() throws {
                var configuration = LoopMetrics.Configuration.nio
                configuration.stallThreshold = .milliseconds(200)
                configuration.stallReport = { [reported] in reported.record($0) }
                configuration.tickObserver = { [ticks] in ticks.record($0) }
                metrics = NIOLoopMetricsDelegate(configuration: configuration, factory: testMetrics)
                group = MultiThreadedEventLoopGroup(numberOfThreads: 1, metricsDelegate: metrics)
                let loop = group.next()
                executor = NIOEventLoopExecutor.shared(for: loop)
                try #require(NIOLoopMetricsDelegateTests.warmUp(loop, metrics, testMetrics))
                dimensions = [("loop", try #require(metrics.loopNames.first))]
            }
        }

        @Test func aClosureThatBlocksTheLoopPastTheThresholdCountsOneStallAndReachesTheChainedReport() throws {
            let watched = try StallWatchedLoop()
            defer { try? watched.group.syncShutdownGracefully() }
            let stalls = try watched.testMetrics.expectCounter(labels.stalls, watched.dimensions)

            watched.executor.submit { usleep(500_000) }
            // The watchdog may report while the closure runs and count just after it returned.
            #expect(waitUntil { stalls.totalValue == 1 && watched.reported.count == 1 })
            #expect(watched.reported.values.first?.threshold == .milliseconds(200))
            #expect(watched.executor.tickTotals.stallCount == 1)
            #expect(watched.ticks.count > 0)
        }

        @Test func configuredNamesAndDimensionsNameEachLoopOfTheGroup() throws {
            let testMetrics = TestMetrics()
            let named = Atomic<Int>(0)
            var configuration = LoopMetrics.Configuration.nio
            configuration.labelPrefix = "kv_loop"
            configuration.loopDimension = "event_loop"
            configuration.dimensions = [("service", "kv")]
            let metrics = NIOLoopMetricsDelegate(
                configuration: configuration, loopName: { _ in "loop-\(named.add(1, ordering: .relaxed).newValue)" },
                factory: testMetrics)
            #expect(metrics.labels.tickItems == "kv_loop_tick_items")
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2, metricsDelegate: metrics)
            defer { try? group.syncShutdownGracefully() }
            for loop in group.makeIterator() {
                let ran = DispatchSemaphore(value: 0)
                loop.execute { ran.signal() }
                ran.wait()
            }
            #expect(waitUntil { metrics.loopNames.count == 2 })
            #expect(Set(metrics.loopNames) == ["loop-1", "loop-2"])
            for name in metrics.loopNames {
                let dimensions = [("service", "kv"), ("event_loop", name)]
                #expect(waitUntil { (try? testMetrics.expectRecorder("kv_loop_tick_items", dimensions)) != nil })
                #expect(try testMetrics.expectCounter("kv_loop_stalls", dimensions).totalValue == 0)
            }
            // Each loop named once, at its first tick.
            for loop in group.makeIterator() { try loop.submit {}.wait() }
            #expect(named.load(ordering: .relaxed) == 2)
        }

        @Test func detachingDestroysTheMetricsRecordsNothingMoreAndTurnsStallDetectionOff() throws {
            let watched = try StallWatchedLoop()
            defer { try? watched.group.syncShutdownGracefully() }
            let (testMetrics, metrics, executor) = (watched.testMetrics, watched.metrics, watched.executor)
            let (reported, ticks, dimensions) = (watched.reported, watched.ticks, watched.dimensions)
            let items = try testMetrics.expectRecorder(labels.tickItems, dimensions)

            metrics.detach()
            #expect(metrics.isDetached)
            metrics.detach()  // does nothing the second time
            // Destroyed: the test backend dropped every series.
            #expect(throws: (any Error).self) { try testMetrics.expectRecorder(labels.tickItems, dimensions) }
            #expect(throws: (any Error).self) { try testMetrics.expectCounter(labels.stalls, dimensions) }
            let recorded = items.values.count
            let ticksBefore = ticks.count

            // Executor work past the old threshold: no stall report, nothing recorded; the observer
            // still sees the ticks.
            let ran = DispatchSemaphore(value: 0)
            executor.submit {
                usleep(300_000)
                ran.signal()
            }
            ran.wait()
            #expect(waitUntil { ticks.count > ticksBefore })
            #expect(items.values.count == recorded)
            #expect(reported.count == 0)
            #expect(executor.tickTotals.stallCount == 0)
        }
    }
#endif
