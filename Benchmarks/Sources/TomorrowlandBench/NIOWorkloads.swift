import CBenchSupport
import NIOCore
import NIOPosix

/// The one NIO loop of a run: a one-thread `MultiThreadedEventLoopGroup`, shared by NIO's side
/// and by our ours@NIO rows, so that both run on the same loop and thread.
final class NIOLoopThread: Sendable {
    let group: MultiThreadedEventLoopGroup
    let loop: any EventLoop
    /// The CPU-time clock of the loop's thread.
    let cpuClock: clockid_t

    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        cpuClock = try! loop.submit { cbench_current_thread_cpu_clock() }.wait()
    }

    /// Stops the loop thread; call once, after every library that uses the loop is done.
    func shutdown() {
        try! group.syncShutdownGracefully()
    }
}

/// SwiftNIO's side of every workload, exactly as notes/benchmarks.md writes it, on a one-thread
/// `MultiThreadedEventLoopGroup`.
enum NIOWorkloads {
    static func make(on nioLoop: NIOLoopThread) -> LibraryUnderTest {
        let loop = nioLoop.loop
        let clock = nioLoop.cpuClock
        let counter = Counter()

        /// Runs `body` on the loop and blocks the bench thread until it calls its argument.
        func onLoop(_ body: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
            let gate = Gate()
            loop.execute { body { gate.open() } }
            gate.wait()
        }

        var workloads: [String: LibraryUnderTest.Run] = [:]

        workloads["W1"] = { iterations in
            counter.reset()
            onLoop { done in
                for _ in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    var future = promise.futureResult
                    for _ in 0..<1000 { future = future.map { $0 &+ 1 } }
                    future.whenSuccess { counter.add($0) }
                    promise.succeed(0)
                }
                done()
            }
            check(counter.count == iterations * 1000, "W1 NIO: \(counter.count) != \(iterations * 1000)")
        }

        workloads["W2"] = { iterations in
            counter.reset()
            onLoop { done in
                for _ in 0..<iterations {
                    let promise = loop.makePromise(of: Int.self)
                    for _ in 0..<1000 { promise.futureResult.whenSuccess { counter.add($0) } }
                    promise.succeed(1)
                }
                done()
            }
            check(counter.count == iterations * 1000, "W2 NIO: \(counter.count) != \(iterations * 1000)")
        }

        workloads["W3"] = { iterations in
            counter.reset()
            onLoop { done in
                for _ in 0..<iterations {
                    for i in 0..<100_000 {
                        let promise = loop.makePromise(of: Int.self)
                        promise.futureResult.whenComplete { _ in counter.add(1) }
                        promise.succeed(i)
                    }
                }
                done()
            }
            check(counter.count == iterations * 100_000, "W3 NIO: \(counter.count) != \(iterations * 100_000)")
        }

        workloads["W4"] = { iterations in
            counter.reset()
            let chains = Chains(remaining: iterations)
            onLoop { done in
                @Sendable func startChain() {
                    let head = loop.makePromise(of: Int.self)
                    var future = head.futureResult
                    for _ in 0..<1000 {
                        future = future.flatMap { value in
                            let link = loop.makePromise(of: Int.self)
                            loop.execute { link.succeed(value &+ 1) }
                            return link.futureResult
                        }
                    }
                    future.whenSuccess { value in
                        check(value == 1000, "W4 NIO: chain ended with \(value)")
                        counter.add(value)
                        if chains.next() { startChain() } else { done() }
                    }
                    head.succeed(0)
                }
                startChain()
            }
            check(counter.count == iterations * 1000, "W4 NIO: \(counter.count) != \(iterations * 1000)")
        }

        func timerInsertCancel(timers: Int, reverse: Bool) -> LibraryUnderTest.Run {
            { iterations in
                counter.reset()
                onLoop { done in
                    var handles: [Scheduled<Void>] = []
                    handles.reserveCapacity(timers)
                    for _ in 0..<iterations {
                        for _ in 0..<timers {
                            handles.append(loop.scheduleTask(in: .hours(1)) {})
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
                check(counter.count == iterations * timers, "W5 NIO: \(counter.count) != \(iterations * timers)")
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
                        loop.scheduleTask(in: .microseconds(Int64(i))) {
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
            check(counter.count == iterations * 10_000, "W5b NIO: \(counter.count) != \(iterations * 10_000)")
        }

        workloads["W6"] = { iterations in
            counter.reset()
            let total = iterations * 1_000_000
            for _ in 0..<total {
                loop.execute { counter.add(1) }
            }
            let seen = try! loop.submit { counter.count }.wait()
            check(seen == total, "W6 NIO: \(seen) != \(total)")
        }

        workloads["W7"] = { iterations in
            counter.reset()
            onLoop { done in
                var promises: [EventLoopPromise<Int>] = []
                var futures: [EventLoopFuture<Int>] = []
                promises.reserveCapacity(1000)
                futures.reserveCapacity(1000)
                for _ in 0..<iterations {
                    for _ in 0..<1000 {
                        let promise = loop.makePromise(of: Int.self)
                        promises.append(promise)
                        futures.append(promise.futureResult)
                    }
                    let all = EventLoopFuture.whenAllSucceed(futures, on: loop)
                    all.whenSuccess { values in counter.add(values.count) }
                    for promise in promises { promise.succeed(1) }
                    promises.removeAll(keepingCapacity: true)
                    futures.removeAll(keepingCapacity: true)
                }
                done()
            }
            check(counter.count == iterations * 1000, "W7 NIO: \(counter.count) != \(iterations * 1000)")
        }

        // W8: each request's promise gets a 30 s deadline task that would fail it; the request
        // succeeds at once, and its `whenComplete` (run inside `succeed`) cancels the deadline.
        workloads["W8"] = { iterations in
            counter.reset()
            onLoop { done in
                // The same nesting as ours (rounds of 1,000); NIO's `whenComplete` runs inside
                // `succeed`, so a round is complete when its loop ends.
                for _ in 0..<iterations * w8RoundsPerIteration {
                    for i in 0..<w8RequestsPerRound {
                        let request = loop.makePromise(of: Int.self)
                        let deadline = loop.scheduleTask(in: .seconds(30)) {
                            request.fail(DeadlineExceeded())
                        }
                        request.futureResult.whenComplete { result in
                            deadline.cancel()
                            if case .success = result { counter.add(1) }
                        }
                        request.succeed(i)
                    }
                }
                done()
            }
            check(counter.count == iterations * 100_000, "W8 NIO: \(counter.count) != \(iterations * 100_000)")
        }

        return LibraryUnderTest(
            name: "SwiftNIO",
            loopCPUClock: clock,
            workloads: workloads,
            // The loop belongs to the `NIOLoopThread`, which the caller shuts down.
            shutdown: {},
            measurePendingPromiseMemory: { count in
                counter.reset()
                let figures = try! loop.submit { () -> MemoryFigures in
                    var slots = [EventLoopPromise<Int>?](repeating: nil, count: count)
                    let rssBefore = cbench_rss_bytes()
                    let mallocBefore = cbench_malloc_in_use_bytes()
                    for index in 0..<count {
                        let promise = loop.makePromise(of: Int.self)
                        promise.futureResult.whenComplete { _ in counter.add(1) }
                        slots[index] = promise
                    }
                    let rssAfter = cbench_rss_bytes()
                    let mallocAfter = cbench_malloc_in_use_bytes()
                    for index in 0..<count { slots[index]!.succeed(index) }
                    slots.removeAll()
                    return MemoryFigures(
                        rssBytesPerPromise: Double(Int64(rssAfter) - Int64(rssBefore)) / Double(count),
                        mallocBytesPerPromise: Double(Int64(mallocAfter) - Int64(mallocBefore)) / Double(count))
                }.wait()
                check(counter.count == count, "M1 NIO: \(counter.count) != \(count)")
                return figures
            })
    }
}

/// Counts down the chains (or runs) of a sequential workload; touched on the loop thread only.
final class Chains: @unchecked Sendable {
    // Invariant: created on the bench thread before the work starts, then used only on the
    // loop thread until the bench thread's `Gate` wait returns.
    private var remaining: Int

    init(remaining: Int) { self.remaining = remaining }

    /// Consumes one chain; returns whether another one should start.
    func next() -> Bool {
        remaining -= 1
        return remaining > 0
    }
}

/// The error W8's NIO deadline would fail a request with (it never fires).
struct DeadlineExceeded: Error {}
