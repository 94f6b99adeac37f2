import CBenchSupport
import Foundation
import Tomorrowland
import TomorrowlandLoop

/// Tomorrowland's side of every workload: the same shapes as NIO's, written with Tomorrowland's
/// API on `.loop(loop)` contexts, on an `EventLoop` that runs on a thread of its own.
///
/// Two differences of shape, both forced by our callbacks being asynchronous on `.loop(loop)`
/// (they run from the loop's local FIFO after the current task, never inside `fulfill`):
/// - A chain (or round) is complete only when its last callback has run, so the next chain is
///   started from that callback (as NIO's W4 does), not from a `for` loop. Otherwise every
///   iteration's chain would be pending at once and the run would measure a huge working set.
/// - The tail of a chain is kept by the driver until it resolves, as a waiting user would keep
///   it; dropping a pending promise's last handle is a cancellation request in Tomorrowland.
///
/// W1i, W2i and W3i run the W1, W2 and W3 shapes on `.immediate`, which is what NIO's synchronous
/// callbacks do: these rows compare the promise machinery without the loop hop.
enum TomorrowlandWorkloads {
    static func make() -> LibraryUnderTest? {
        let loop = EventLoop()
        let stopped = Gate()
        let thread = Thread {
            loop.run()
            stopped.open()
        }
        thread.name = "TomorrowlandBench loop"
        thread.start()

        /// Runs `body` on the loop and blocks the bench thread until it calls its argument.
        @Sendable func onLoop(_ body: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
            let gate = Gate()
            loop.execute { body { gate.open() } }
            gate.wait()
        }

        let clockSlot = Slot<clockid_t>()
        onLoop { done in
            clockSlot.value = cbench_current_thread_cpu_clock()
            done()
        }
        let context = PromiseContext.loop(loop)
        let counter = Counter()
        var workloads: [String: LibraryUnderTest.Run] = [:]

        workloads["W1"] = { iterations in
            counter.reset()
            let chains = Chains(remaining: iterations)
            let tail = Slot<Promise<Int, Never>>()
            onLoop { done in
                @Sendable func startChain() {
                    let (head, resolver) = Promise<Int, Never>.makeWithResolver()
                    var promise = head
                    for _ in 0..<1000 { promise = promise.map(on: context) { $0 &+ 1 } }
                    promise.tap(on: context) { result in
                        counter.add(result.value ?? 0)
                        tail.value = nil
                        if chains.next() { startChain() } else { done() }
                    }
                    tail.value = promise
                    resolver.fulfill(with: 0)
                }
                startChain()
            }
            check(counter.count == iterations * 1000, "W1 ours: \(counter.count) != \(iterations * 1000)")
        }

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

        // `tap`, not `then`: like NIO's `whenSuccess` it registers a callback without making a
        // new promise (it returns the receiver), so both sides pay for the same thing.
        workloads["W2"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations)
            onLoop { done in
                @Sendable func startRound() {
                    let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                    for _ in 0..<999 { promise.tap(on: context) { counter.add($0.value ?? 0) } }
                    // Callbacks run in registration order: the last one ends the round.
                    promise.tap(on: context) { result in
                        counter.add(result.value ?? 0)
                        if rounds.next() { startRound() } else { done() }
                    }
                    resolver.fulfill(with: 1)
                }
                startRound()
            }
            check(counter.count == iterations * 1000, "W2 ours: \(counter.count) != \(iterations * 1000)")
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

        workloads["W3"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations)
            onLoop { done in
                @Sendable func startRound() {
                    for i in 0..<100_000 {
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        if i == 99_999 {
                            // Callbacks reach the loop's FIFO in resolution order: this one runs last.
                            promise.tap(on: context) { _ in
                                counter.add(1)
                                if rounds.next() { startRound() } else { done() }
                            }
                        } else {
                            promise.tap(on: context) { _ in counter.add(1) }
                        }
                        resolver.fulfill(with: i)
                    }
                }
                startRound()
            }
            check(counter.count == iterations * 100_000, "W3 ours: \(counter.count) != \(iterations * 100_000)")
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

        workloads["W4"] = { iterations in
            counter.reset()
            let chains = Chains(remaining: iterations)
            let tail = Slot<Promise<Int, Never>>()
            onLoop { done in
                @Sendable func startChain() {
                    let (head, resolver) = Promise<Int, Never>.makeWithResolver()
                    var promise = head
                    for _ in 0..<1000 {
                        promise = promise.flatMap(on: context) { value in
                            let (link, linkResolver) = Promise<Int, Never>.makeWithResolver()
                            loop.execute { linkResolver.fulfill(with: value &+ 1) }
                            return link
                        }
                    }
                    promise.tap(on: context) { result in
                        let value = result.value ?? -1
                        check(value == 1000, "W4 ours: chain ended with \(value)")
                        counter.add(value)
                        tail.value = nil
                        if chains.next() { startChain() } else { done() }
                    }
                    tail.value = promise
                    resolver.fulfill(with: 0)
                }
                startChain()
            }
            check(counter.count == iterations * 1000, "W4 ours: \(counter.count) != \(iterations * 1000)")
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

        workloads["W7"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations)
            let inputs = Inputs()
            onLoop { done in
                @Sendable func startRound() {
                    for _ in 0..<1000 {
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        inputs.promises.append(promise)
                        inputs.resolvers.append(resolver)
                    }
                    // `when(fulfilled:)` delivers on a Dispatch global queue (API.md I3); the
                    // tap brings the result back to the loop, where the next round starts.
                    let all = when(fulfilled: inputs.promises)
                    inputs.all = all
                    all.tap(on: context) { result in
                        counter.add(result.value?.count ?? 0)
                        inputs.all = nil
                        if rounds.next() { startRound() } else { done() }
                    }
                    for resolver in inputs.resolvers { resolver.fulfill(with: 1) }
                    inputs.promises.removeAll(keepingCapacity: true)
                    inputs.resolvers.removeAll(keepingCapacity: true)
                }
                startRound()
            }
            check(counter.count == iterations * 1000, "W7 ours: \(counter.count) != \(iterations * 1000)")
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
