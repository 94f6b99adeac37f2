import CBenchSupport
import Foundation
import Tomorrowland
import TomorrowlandLoop

/// Tomorrowland's side of every workload: the same shapes as NIO's, written with Tomorrowland's
/// API on `.loop(loop)` contexts, on an `EventLoop` that runs on a thread of its own. W1, W2, W3,
/// W4 and W7 are ``PromiseWorkloads``, shared with the ours@NIO rows.
///
/// W1i, W2i and W3i run the W1, W2 and W3 shapes on `.immediate`, which is what NIO's synchronous
/// callbacks do: these rows compare the promise machinery without the loop hop.
enum TomorrowlandWorkloads {
    static func make() -> LibraryUnderTest? {
        let loop = EventLoop()
        // The loop's diagnostics, off in every gated figure; on only to measure what they cost
        // (Benchmarks/README.md). A threshold no work reaches: the cost of publishing each piece
        // of work, not of reporting.
        let environment = ProcessInfo.processInfo.environment
        if environment["TOMORROWLAND_BENCH_STALL_DETECTION"] == "1" {
            loop.enableStallDetection(threshold: .seconds(3600)) { _ in }
        }
        if environment["TOMORROWLAND_BENCH_TICK_STATISTICS"] == "1" {
            loop.enableTickStatistics()
        }
        let stopped = Gate()
        let thread = Thread {
            loop.run()
            stopped.open()
        }
        thread.name = "TomorrowlandBench loop"
        thread.start()

        /// Runs `body` on the loop and blocks the bench thread until it calls its argument.
        @Sendable func onLoop(_ body: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
            loop.runAndWait(body)
        }

        let clockSlot = Slot<clockid_t>()
        onLoop { done in
            clockSlot.value = cbench_current_thread_cpu_clock()
            done()
        }
        let context = PromiseContext.loop(loop)
        let counter = Counter()
        var workloads = PromiseWorkloads.make(loop: loop, context: context, counter: counter, label: "ours")

        workloads["W1i"] = { iterations in
            counter.reset()
            onLoop { done in
                for _ in 0..<iterations {
                    let (head, resolver) = Promise<Int, Never>.makeWithResolver()
                    var promise = head
                    for _ in 0..<1000 { promise = promise.map(on: .immediate) { $0 &+ 1 } }
                    promise.tap(on: .immediate) { counter.add($0.value ?? 0) }
                    resolver.fulfill(with: 0)
                }
                done()
            }
            check(counter.count == iterations * 1000, "W1i ours: \(counter.count) != \(iterations * 1000)")
        }

        workloads["W2i"] = { iterations in
            counter.reset()
            onLoop { done in
                for _ in 0..<iterations {
                    let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                    for _ in 0..<1000 { promise.tap(on: .immediate) { counter.add($0.value ?? 0) } }
                    resolver.fulfill(with: 1)
                }
                done()
            }
            check(counter.count == iterations * 1000, "W2i ours: \(counter.count) != \(iterations * 1000)")
        }

        workloads["W3i"] = { iterations in
            counter.reset()
            onLoop { done in
                for _ in 0..<iterations {
                    for i in 0..<100_000 {
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        promise.tap(on: .immediate) { _ in counter.add(1) }
                        resolver.fulfill(with: i)
                    }
                }
                done()
            }
            check(counter.count == iterations * 100_000, "W3i ours: \(counter.count) != \(iterations * 100_000)")
        }

        func timerInsertCancel(timers: Int, reverse: Bool) -> LibraryUnderTest.Run {
            { iterations in
                counter.reset()
                onLoop { done in
                    var handles: [any PromiseScheduledWork] = []
                    handles.reserveCapacity(timers)
                    for _ in 0..<iterations {
                        for _ in 0..<timers {
                            handles.append(loop.schedule(after: .seconds(3600)) {})
                        }
                        if reverse {
                            for handle in handles.reversed() { handle.cancel() }
                        } else {
                            for handle in handles { handle.cancel() }
                        }
                        counter.add(handles.count)
                        handles.removeAll(keepingCapacity: true)
                    }
                    done()
                }
                check(counter.count == iterations * timers, "W5 ours: \(counter.count) != \(iterations * timers)")
            }
        }
        workloads["W5"] = timerInsertCancel(timers: 100_000, reverse: false)
        workloads["W5r"] = timerInsertCancel(timers: 10_000, reverse: true)

        workloads["W5b"] = { iterations in
            counter.reset()
            let runs = Chains(remaining: iterations)
            let fired = Counter()
            onLoop { done in
                @Sendable func scheduleRun() {
                    fired.reset()
                    for i in 0..<10_000 {
                        _ = loop.schedule(after: .microseconds(i)) {
                            fired.add(1)
                            counter.add(1)
                            if fired.count == 10_000 {
                                if runs.next() { loop.execute { scheduleRun() } } else { done() }
                            }
                        }
                    }
                }
                scheduleRun()
            }
            check(counter.count == iterations * 10_000, "W5b ours: \(counter.count) != \(iterations * 10_000)")
        }

        workloads["W6"] = { iterations in
            counter.reset()
            let total = iterations * 1_000_000
            for _ in 0..<total {
                loop.execute { counter.add(1) }
            }
            // Tasks from one thread run in FIFO order: once this one has run, all the others have.
            let seen = Slot<Int>()
            onLoop { done in
                seen.value = counter.count
                done()
            }
            check(seen.value == total, "W6 ours: \(seen.value ?? -1) != \(total)")
        }

        return LibraryUnderTest(
            name: "Tomorrowland",
            loopCPUClock: clockSlot.value!,
            workloads: workloads,
            shutdown: {
                loop.shutdown()
                stopped.wait()
            },
            measurePendingPromiseMemory: { count in
                counter.reset()
                let figures = Slot<MemoryFigures>()
                onLoop { done in
                    // The slots hold what a user and a producer hold: the promise and its
                    // resolver. Pre-filled, so their pages are resident before the first reading.
                    var slots = [(Promise<Int, Never>, Promise<Int, Never>.Resolver)?](repeating: nil, count: count)
                    let rssBefore = cbench_rss_bytes()
                    let mallocBefore = cbench_malloc_in_use_bytes()
                    for index in 0..<count {
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        if index == count - 1 {
                            promise.tap(on: context) { _ in
                                counter.add(1)
                                done()
                            }
                        } else {
                            promise.tap(on: context) { _ in counter.add(1) }
                        }
                        slots[index] = (promise, resolver)
                    }
                    let rssAfter = cbench_rss_bytes()
                    let mallocAfter = cbench_malloc_in_use_bytes()
                    figures.value = MemoryFigures(
                        rssBytesPerPromise: Double(Int64(rssAfter) - Int64(rssBefore)) / Double(count),
                        mallocBytesPerPromise: Double(Int64(mallocAfter) - Int64(mallocBefore)) / Double(count))
                    for index in 0..<count { slots[index]!.1.fulfill(with: index) }
                    slots.removeAll()
                }
                check(counter.count == count, "M1 ours: \(counter.count) != \(count)")
                return figures.value!
            })
    }
}

extension EventLoop: WorkloadLoop {
    func enqueueTask(_ work: @escaping @Sendable () -> Void) {
        execute(work)
    }
}

/// A value handed between the loop thread and the bench thread.
final class Slot<Value>: @unchecked Sendable {
    // Invariant: written on one thread before a `Gate` opens, read on the other after its wait
    // returns (or only ever touched on the loop thread), so the accesses never overlap.
    var value: Value?
}

/// W7's reusable input arrays and the pending result, touched on the loop thread only.
final class Inputs: @unchecked Sendable {
    // Invariant: used only on the loop thread, inside one round at a time.
    var promises: [Promise<Int, Never>] = []
    var resolvers: [Promise<Int, Never>.Resolver] = []
    var all: Promise<[Int], Never>?

    init() {
        promises.reserveCapacity(1000)
        resolvers.reserveCapacity(1000)
    }
}
