#if Metrics
    import CoreMetrics
    import Foundation
    import MetricsTestKit
    import Testing
    import Tomorrowland
    import TomorrowlandMetrics
    import TomorrowlandTestSupport

    /// The pending-promise gauges read back from MetricsTestKit's `TestMetrics`, each test in a
    /// process of its own (an exit test): the tracking and its registry are process-wide, and
    /// the promises of tests running in parallel would be counted too.
    @Suite("Pending-promise metrics")
    struct PendingPromiseMetricsTests {
        /// The `name value` lines a child process printed, as a dictionary.
        private static func figures(_ output: [UInt8]) -> [String: String] {
            var figures: [String: String] = [:]
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                if parts.count == 2 { figures[String(parts[0])] = String(parts[1]) }
            }
            return figures
        }

        @Test func theGaugesCountThePendingRootPromisesAndAgeTheOldest() async throws {
            let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
                PendingPromiseTracking.start()
                let metrics = TestMetrics()
                let pendingPromises = PendingPromiseMetrics(dimensions: [("service", "test")], factory: metrics)
                let dimensions = [("service", "test")]
                let count = try metrics.expectGauge("tomorrowland_pending_promises", dimensions)
                let age = try metrics.expectGauge("tomorrowland_oldest_pending_promise_age_seconds", dimensions)

                // Three root promises left pending, the oldest 30 ms before the others; one
                // resolved; one whose cancellation was requested (still pending: its resolver
                // has not acted on it); one derived from a pending one (not a root: not counted).
                let (oldest, oldestResolver) = Promise<Int, NoError>.makeWithResolver()
                usleep(30_000)
                let (second, secondResolver) = Promise<String, NoError>.makeWithResolver()
                let (resolved, resolvedResolver) = Promise<Int, NoError>.makeWithResolver()
                resolvedResolver.fulfill(with: 1)
                let (cancelled, cancelledResolver) = Promise<Int, Error>.makeWithResolver()
                cancelled.requestCancel()
                let derived = second.map(on: .immediate) { $0.count }
                let summary = try #require(pendingPromises.update())
                print("summary \(summary.count)")
                print("count \(count.lastValue ?? -1)")
                print("age-at-least-30ms \((age.lastValue ?? 0) >= 0.03)")
                print("report \(PendingPromiseTracking.report().promises.count)")

                // Resolving two leaves one; the oldest left is younger than the first one was.
                oldestResolver.fulfill(with: 0)
                cancelledResolver.cancel()
                pendingPromises.update()
                print("count-after \(count.lastValue ?? -1)")
                secondResolver.fulfill(with: "done")
                pendingPromises.update()
                print("count-none \(count.lastValue ?? -1)")
                print("age-none \(age.lastValue ?? -1)")
                print("records \(count.values.count)")

                // Off: nothing is read and nothing recorded, even with a promise pending.
                PendingPromiseTracking.stop()
                let (_, keptResolver) = Promise<Int, NoError>.makeWithResolver()
                print("off-update \(pendingPromises.update() == nil)")
                print("records-off \(count.values.count)")
                keptResolver.fulfill(with: 0)
                withExtendedLifetime((oldest, second, resolved, cancelled, derived)) {}
            }
            let figures = Self.figures(try #require(result).standardOutputContent)
            #expect(figures["summary"] == "3")
            #expect(figures["count"] == "3.0")
            #expect(figures["age-at-least-30ms"] == "true")
            #expect(figures["report"] == "3")
            #expect(figures["count-after"] == "1.0")
            #expect(figures["count-none"] == "0.0")
            #expect(figures["age-none"] == "0.0")
            #expect(figures["records"] == "3")
            #expect(figures["off-update"] == "true")
            #expect(figures["records-off"] == "3")
        }

        @Test func updatesWhilePromisesAreMadeResolvedAndDroppedOnOtherThreadsCountWhatIsLeft() async throws {
            let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
                PendingPromiseTracking.start()
                // Dropped resolvers are reported as they die: quietly here.
                PendingPromiseTracking.droppedResolverHandler = { _ in }
                let metrics = TestMetrics()
                let pendingPromises = PendingPromiseMetrics(factory: metrics)
                let kept = Locked<[Promise<Int, NoError>.Resolver]>([])
                let done = DispatchSemaphore(value: 0)
                for _ in 0..<2 {
                    Thread {
                        for index in 0..<2_000 {
                            let (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
                            switch index % 3 {
                            case 0: resolver.fulfill(with: index)
                            case 1: _ = promise  // both dropped: the promise dies pending
                            default: if index % 100 == 2 { kept.withLock { $0.append(resolver) } }
                            }
                        }
                        done.signal()
                    }.start()
                }
                // Counting, and listing, while the two threads record, resolve and free
                // promises. (Both once held a promise for a moment: a release from here could
                // run its deinit under the registry's lock, which the deinit takes, and hang.)
                repeat {
                    pendingPromises.update()
                    _ = PendingPromiseTracking.report()
                } while done.wait(timeout: .now()) == .timedOut
                done.wait()
                pendingPromises.update()
                print("count \(try metrics.expectGauge("tomorrowland_pending_promises").lastValue ?? -1)")
                print("kept \(kept.value.count)")
                for resolver in kept.value { resolver.fulfill(with: 0) }
                pendingPromises.update()
                print("after \(try metrics.expectGauge("tomorrowland_pending_promises").lastValue ?? -1)")
            }
            let figures = Self.figures(try #require(result).standardOutputContent)
            // Each thread keeps the resolvers of the indices that are 2 modulo 3 and 2 modulo
            // 100 (2, 302, 602, …, 1,802): 7 each.
            #expect(figures["kept"] == "14")
            #expect(figures["count"] == "14.0")
            #expect(figures["after"] == "0.0")
        }

        @Test func sampledTrackingCountsTheRecordedOnesAndLabelsFollowThePrefix() async throws {
            let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
                PendingPromiseTracking.start(samplingInterval: 4)
                let metrics = TestMetrics()
                let pendingPromises = PendingPromiseMetrics(labelPrefix: "kv", factory: metrics)
                // One thread: sampling counts each thread's root promises, one in 4 recorded.
                let kept = (0..<20).map { _ in Promise<Int, NoError>.makeWithResolver() }
                let summary = try #require(pendingPromises.update())
                print("interval \(summary.samplingInterval)")
                print("count \(try metrics.expectGauge("kv_pending_promises").lastValue ?? -1)")
                print("label \(pendingPromises.labels.oldestPendingAge)")
                for (_, resolver) in kept { resolver.fulfill(with: 0) }
            }
            let figures = Self.figures(try #require(result).standardOutputContent)
            #expect(figures["interval"] == "4")
            #expect(figures["count"] == "5.0")
            #expect(figures["label"] == "kv_oldest_pending_promise_age_seconds")
        }
    }
#endif
