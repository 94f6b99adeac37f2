#if NIO
    import Foundation
    import NIOCore
    import NIOPosix
    import Synchronization
    import Testing
    import Tomorrowland

    @testable import TomorrowlandNIO
    import TomorrowlandTestSupport

    @Suite("NIOLoopTickStatistics")
    struct NIOTickStatisticsTests {
        /// A metrics delegate of a test's own, to check forwarding.
        private final class CountingDelegate: NIOEventLoopMetricsDelegate {
            let ticks = Atomic<Int>(0)

            func processedTick(info: NIOEventLoopTickInfo) {
                ticks.wrappingAdd(1, ordering: .relaxed)
            }
        }

        /// The items of the ticks recorded after the first `skipping`.
        private static func items(of ticks: Recorder<LoopTick>, skipping: Int) -> Int {
            ticks.values.dropFirst(skipping).reduce(0) { $0 + $1.itemCount }
        }

        @Test func eachTickCountsTheExecutorsWorkPieceByPiece() throws {
            let ticks = Recorder<LoopTick>()
            let forwarded = CountingDelegate()
            let statistics = NIOLoopTickStatistics(observer: { ticks.record($0) }, forwardingTo: forwarded)
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1, metricsDelegate: statistics)
            defer { try? group.syncShutdownGracefully() }
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)

            // A first task, whose tick starts the executor's counting (that tick is NIO's count
            // as it is), and the tick that reports it: after it, the loop runs only what follows.
            let warmed = DispatchSemaphore(value: 0)
            loop.execute { warmed.signal() }
            warmed.wait()
            #expect(waitUntil { ticks.values.contains { $0.itemCount >= 1 } })
            let before = ticks.count
            let totalsBefore = executor.tickTotals

            // One NIO task queues 100 closures on the executor's FIFO (one drain, plus the empty
            // drain that ends the chain) and 50 timers due at once (one NIO callback): 151 pieces
            // of work in four NIO tasks.
            let ran = Atomic<Int>(0)
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                for _ in 0..<100 {
                    executor.submit {
                        if ran.add(1, ordering: .relaxed).newValue == 150 { done.signal() }
                    }
                }
                for _ in 0..<50 {
                    _ = executor.schedule(after: .zero) {
                        if ran.add(1, ordering: .relaxed).newValue == 150 { done.signal() }
                    }
                }
            }
            done.wait()
            #expect(waitUntil { Self.items(of: ticks, skipping: before) >= 151 })
            #expect(Self.items(of: ticks, skipping: before) == 151)

            let after = ticks.values.dropFirst(before)
            let totals = executor.tickTotals
            #expect(totals.itemCount - totalsBefore.itemCount == 151)
            #expect(totals.tickCount - totalsBefore.tickCount >= UInt64(after.count))
            #expect(totals.busyTime >= after.reduce(.zero) { $0 + $1.busyTime })
            #expect(after.allSatisfy { $0.loopID == ObjectIdentifier(loop) })
            #expect(after.contains { $0.busyTime > .zero })
            #expect(totals.stallCount == 0)
            #expect(forwarded.ticks.load(ordering: .relaxed) >= ticks.count)
        }

        // Synchronous, like the test above: a `CheckedContinuation` resumed on the loop's thread
        // (`await future.get()`) followed by more awaits in the same task gave ThreadSanitizer a
        // report in 1 run of 7 (the task allocator reuses the continuation's memory, and the
        // sanitizer does not see the runtime's hand-over), so these tests only block and poll.
        @Test func promiseCallbacksOnTheLoopAreCountedOneByOne() throws {
            let ticks = Recorder<LoopTick>()
            let group = MultiThreadedEventLoopGroup(
                numberOfThreads: 1, metricsDelegate: NIOLoopTickStatistics { ticks.record($0) })
            defer { try? group.syncShutdownGracefully() }
            let loop = group.next()
            // The warm-up is a task and a semaphore, not `loop.submit {}.wait()`: `wait()` called
            // off the loop registers its callback with a NIO task of its own, which can run in a
            // tick after the one this waits for and be counted with the work below (22 items for
            // 21, once under AddressSanitizer in CI).
            let warmed = DispatchSemaphore(value: 0)
            loop.execute { warmed.signal() }
            warmed.wait()
            #expect(waitUntil { ticks.values.contains { $0.itemCount >= 1 } })

            // One NIO task fulfils 20 promises, each with one callback on `.nio(loop)`: 20 promise
            // jobs in the executor's FIFO, which one drain runs. The task reads how many ticks were
            // recorded before it: every tick before its own.
            let pairs = (0..<20).map { _ in Promise<Int, TestError>.makeWithResolver() }
            let callbacks = pairs.map { promise, _ in promise.map(on: .nio(loop)) { $0 + 1 } }
            let resolvers = pairs.map(\.1)
            let ticksBeforeTheTask = Atomic<Int>(-1)
            loop.execute {
                ticksBeforeTheTask.store(ticks.count, ordering: .relaxed)
                for resolver in resolvers { resolver.fulfill(with: 1) }
            }
            #expect(waitUntil { callbacks.allSatisfy { $0.result != nil } })
            #expect(callbacks.allSatisfy { $0.result?.value == 2 })
            // 21 pieces of work: the NIO task that fulfils, and the 20 jobs the drain ran (the
            // drain that ends the chain ran none); NIO counts three tasks.
            let before = ticksBeforeTheTask.load(ordering: .relaxed)
            #expect(before >= 1)
            #expect(waitUntil { Self.items(of: ticks, skipping: before) >= 21 })
            #expect(Self.items(of: ticks, skipping: before) == 21)
        }

        @Test func aLoopWithoutTheDelegateCountsNothing() throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { try? group.syncShutdownGracefully() }
            let loop = group.next()
            let executor = NIOEventLoopExecutor.shared(for: loop)
            for _ in 0..<10 { try loop.submit {}.wait() }
            #expect(
                executor.tickTotals
                    == LoopTickTotals(tickCount: 0, itemCount: 0, busyTime: .zero, waitingTime: .zero, stallCount: 0)
            )
            #expect(!executor.monitor.isActiveForTests)
        }
    }
#endif
