#if Metrics
    import CoreMetrics
    import Foundation
    import MetricsTestKit
    import Testing
    import Tomorrowland
    import TomorrowlandLoop
    import TomorrowlandMetrics
    import TomorrowlandTestSupport

    /// Known work on a real `EventLoop`, each metric read back from MetricsTestKit's `TestMetrics`
    /// (passed as the factory: `MetricsSystem.bootstrap` is once per process).
    @Suite("EventLoop metrics")
    struct LoopMetricsTests {
        private let labels = LoopMetrics.Labels(prefix: "tomorrowland_loop")
        private let main = [("loop", "main")]

        @Test func itemsPerTickSumToTheWorkRunAndEachTickRecordsItsDurations() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            loop.enableMetrics(name: "main", factory: metrics)
            for _ in 0..<5 { loop.execute {} }
            loop.runUntilIdle()

            let items = try metrics.expectRecorder(labels.tickItems, main)
            #expect(items.values.first == 5)
            #expect(items.values.reduce(0, +) == 5)
            #expect(items.aggregate)
            let ticks = Int(loop.tickTotals.tickCount)
            #expect(items.values.count == ticks)
            #expect(try metrics.expectTimer(labels.tickDuration, main).values.count == ticks)
            #expect(try metrics.expectTimer(labels.waitDuration, main).values.count == ticks)
            #expect(try metrics.expectCounter(labels.stalls, main).totalValue == 0)
            loop.shutdown()
        }

        @Test func tickDurationCoversTheWorkOfTheTick() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            loop.enableMetrics(name: "main", factory: metrics)
            loop.execute { usleep(20_000) }
            loop.runUntilIdle()
            let durations = try metrics.expectTimer(labels.tickDuration, main).values
            #expect(durations.first.map { $0 >= 20_000_000 } == true)
            loop.shutdown()
        }

        @Test func queuedWorkCountsWhatOtherThreadsSubmittedDuringTheTick() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            loop.enableMetrics(name: "main", factory: metrics)
            loop.execute {
                // Submitted from another thread while this tick runs: into the inbox, which the
                // loop takes at its next tick.
                let submitted = DispatchSemaphore(value: 0)
                Thread {
                    for _ in 0..<7 { loop.execute {} }
                    submitted.signal()
                }.start()
                submitted.wait()
            }
            loop.runUntilIdle()
            let queued = try metrics.expectGauge(labels.queuedWork, main).values
            #expect(queued.first == 7)
            #expect(queued.last == 0)
            let items = try metrics.expectRecorder(labels.tickItems, main).values
            #expect(Array(items.prefix(2)) == [1, 7])
            loop.shutdown()
        }

        @Test func queuedWorkCountsWhatTheRoundsBudgetLeftForTheNextTick() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            loop.enableMetrics(name: "main", factory: metrics)
            // One round runs at most 4,096 items: this one and 4,095 of the 5,000 it queues.
            loop.execute {
                for _ in 0..<5_000 { loop.execute {} }
            }
            loop.runUntilIdle()
            let queued = try metrics.expectGauge(labels.queuedWork, main).values
            #expect(queued.first == 905)
            #expect(queued.last == 0)
            let items = try metrics.expectRecorder(labels.tickItems, main).values
            #expect(Array(items.prefix(2)) == [4_096, 905])
            loop.shutdown()
        }

        @Test func armedTimersCountScheduledTimersUntilCancelled() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            loop.enableMetrics(name: "main", factory: metrics)
            let timers = (0..<4).map { _ in loop.schedule(after: .seconds(3600)) {} }
            loop.runUntilIdle()
            let armed = try metrics.expectGauge(labels.armedTimers, main)
            #expect(armed.lastValue == 4)
            timers[0].cancel()
            timers[1].cancel()
            loop.runUntilIdle()
            #expect(armed.lastValue == 2)
            loop.shutdown()
        }

        @Test func aBlockingCallbackPastTheThresholdCountsOneStallAndReachesTheChainedReport() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            let reported = Recorder<LoopStall>()
            var configuration = LoopMetrics.Configuration()
            // Far above the preemptions of a loaded machine, which would rightly count as more
            // stalls: only the blocking callback may pass it.
            configuration.stallThreshold = .milliseconds(200)
            configuration.stallReport = { reported.record($0) }
            loop.enableMetrics(name: "main", configuration: configuration, factory: metrics)
            loop.execute { usleep(500_000) }
            loop.runUntilIdle()
            let stalls = try metrics.expectCounter(labels.stalls, main)
            // The watchdog may report while the callback runs and count just after it returned.
            #expect(waitUntil { stalls.totalValue == 1 && reported.count == 1 })
            #expect(reported.values.first?.threshold == .milliseconds(200))
            #expect(loop.tickTotals.stallCount == 1)
            loop.shutdown()
            #expect(stalls.totalValue == 1)
        }

        @Test func aChainedTickObserverSeesEveryTickAfterTheMetrics() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            let ticks = Recorder<LoopTick>()
            var configuration = LoopMetrics.Configuration()
            configuration.tickObserver = { ticks.record($0) }
            loop.enableMetrics(name: "main", configuration: configuration, factory: metrics)
            for _ in 0..<3 { loop.execute {} }
            loop.runUntilIdle()
            let items = try metrics.expectRecorder(labels.tickItems, main).values
            #expect(ticks.values.map { Double($0.itemCount) } == items)
            loop.shutdown()
        }

        @Test func dimensionsAndLabelsFollowTheConfiguration() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            var configuration = LoopMetrics.Configuration()
            configuration.labelPrefix = "kv_loop"
            configuration.loopDimension = "thread"
            configuration.dimensions = [("service", "kv")]
            let attached = loop.enableMetrics(name: "io", configuration: configuration, factory: metrics)
            loop.execute {}
            loop.runUntilIdle()
            #expect(attached.labels.tickItems == "kv_loop_tick_items")
            let items = try metrics.expectRecorder("kv_loop_tick_items", [("service", "kv"), ("thread", "io")])
            #expect(items.values.reduce(0, +) == 1)
            loop.shutdown()
        }

        @Test func detachingStopsRecordingDestroysTheMetricsAndKeepsTheTotals() throws {
            let loop = EventLoop()
            let metrics = TestMetrics()
            var configuration = LoopMetrics.Configuration()
            configuration.stallThreshold = .milliseconds(10)
            let attached = loop.enableMetrics(name: "main", configuration: configuration, factory: metrics)
            loop.execute {}
            loop.runUntilIdle()
            let items = try metrics.expectRecorder(labels.tickItems, main)
            let recorded = items.values.count
            attached.detach()
            attached.detach()
            #expect(attached.isDetached)
            let totals = loop.tickTotals
            loop.execute { usleep(30_000) }
            loop.runUntilIdle()
            #expect(items.values.count == recorded)
            #expect(loop.tickTotals == totals)
            #expect(metrics.recorders.isEmpty)
            #expect(metrics.timers.isEmpty)
            #expect(metrics.counters.isEmpty)
            loop.shutdown()
        }

        @Test func aGroupReportsEachLoopUnderItsIndex() throws {
            let group = EventLoopGroup(loopCount: 2)
            let metrics = TestMetrics()
            let attached = group.enableMetrics(factory: metrics)
            #expect(attached.map(\.name) == ["0", "1"])
            let ran = DispatchSemaphore(value: 0)
            // A round trip to each loop: the tick after it runs with the metrics on.
            for loop in group.loops {
                loop.execute { ran.signal() }
                ran.wait()
            }
            for _ in 0..<3 { group.loops[1].execute { ran.signal() } }
            for _ in 0..<3 { ran.wait() }
            group.syncShutdownGracefully()
            // The metrics take effect at each loop's next tick, which may or may not be the one
            // that took the first submission: the loop's own totals say what was measured.
            let second = try metrics.expectRecorder(labels.tickItems, [("loop", "1")])
            let first = try metrics.expectRecorder(labels.tickItems, [("loop", "0")])
            #expect(second.values.reduce(0, +) == Double(group.loops[1].tickTotals.itemCount))
            #expect(first.values.reduce(0, +) == Double(group.loops[0].tickTotals.itemCount))
            #expect(group.loops[1].tickTotals.itemCount >= 3)
            #expect(group.loops[0].tickTotals.itemCount <= 1)
        }
    }
#endif
