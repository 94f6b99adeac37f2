import Foundation
import Tomorrowland

/// A loop that the promise workloads drive: our `EventLoop`, or a NIO `EventLoop` for the
/// ours@NIO rows.
protocol WorkloadLoop: Sendable {
    /// Queues `work` as a task of its own on the loop, from any thread: how the bench thread
    /// starts work, and W4's separate task per link.
    func enqueueTask(_ work: @escaping @Sendable () -> Void)
}

extension WorkloadLoop {
    /// Runs `body` on the loop and blocks the bench thread until it calls its argument.
    func runAndWait(_ body: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
        let gate = Gate()
        // Inside a request's ServiceContext when TOMORROWLAND_BENCH_SERVICE_CONTEXT=request.
        enqueueTask { BenchServiceContext.run { body { gate.open() } } }
        gate.wait()
    }
}

/// Our side of W1, W2, W3, W4, W7 and W8, written once for any loop and context: on our `EventLoop`
/// with `.loop(loop)`, and on a NIO loop with `.nio(loop)` (the ours@NIO rows), so that the two
/// hosts run the very same code.
///
/// Two differences of shape from NIO's side, both forced by our callbacks being asynchronous on
/// a loop context (they run after the current task, never inside `fulfill`):
/// - A chain (or round) is complete only when its last callback has run, so the next chain is
///   started from that callback (as NIO's W4 does), not from a `for` loop. Otherwise every
///   iteration's chain would be pending at once and the run would measure a huge working set.
/// - The tail of a chain is kept by the driver until it resolves, as a waiting user would keep
///   it; dropping a pending promise's last handle is a cancellation request in Tomorrowland.
enum PromiseWorkloads {
    /// The runners, keyed by workload id; `label` names the library in failed checks.
    ///
    /// Generic rather than over `any WorkloadLoop`, so that each host gets a specialised copy
    /// and W4's per-link task costs what the host's own `execute` costs.
    static func make<Loop: WorkloadLoop>(
        loop: Loop, context: PromiseContext, counter: Counter, label: String
    ) -> [String: LibraryUnderTest.Run] {
        var workloads: [String: LibraryUnderTest.Run] = [:]

        workloads["W1"] = { iterations in
            counter.reset()
            let chains = Chains(remaining: iterations)
            let tail = Slot<Promise<Int, Never>>()
            loop.runAndWait { done in
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
            check(counter.count == iterations * 1000, "W1 \(label): \(counter.count) != \(iterations * 1000)")
        }

        // `tap`, not `then`: like NIO's `whenSuccess` it registers a callback without making a
        // new promise (it returns the receiver), so both sides pay for the same thing.
        workloads["W2"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations)
            loop.runAndWait { done in
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
            check(counter.count == iterations * 1000, "W2 \(label): \(counter.count) != \(iterations * 1000)")
        }

        workloads["W3"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations)
            loop.runAndWait { done in
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
            check(counter.count == iterations * 100_000, "W3 \(label): \(counter.count) != \(iterations * 100_000)")
        }

        workloads["W4"] = { iterations in
            counter.reset()
            let chains = Chains(remaining: iterations)
            let tail = Slot<Promise<Int, Never>>()
            loop.runAndWait { done in
                @Sendable func startChain() {
                    let (head, resolver) = Promise<Int, Never>.makeWithResolver()
                    var promise = head
                    for _ in 0..<1000 {
                        promise = promise.flatMap(on: context) { value in
                            let (link, linkResolver) = Promise<Int, Never>.makeWithResolver()
                            loop.enqueueTask { linkResolver.fulfill(with: value &+ 1) }
                            return link
                        }
                    }
                    promise.tap(on: context) { result in
                        let value = result.value ?? -1
                        check(value == 1000, "W4 \(label): chain ended with \(value)")
                        counter.add(value)
                        tail.value = nil
                        if chains.next() { startChain() } else { done() }
                    }
                    tail.value = promise
                    resolver.fulfill(with: 0)
                }
                startChain()
            }
            check(counter.count == iterations * 1000, "W4 \(label): \(counter.count) != \(iterations * 1000)")
        }

        workloads["W7"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations)
            let inputs = Inputs()
            loop.runAndWait { done in
                @Sendable func startRound() {
                    for _ in 0..<1000 {
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        inputs.promises.append(promise)
                        inputs.resolvers.append(resolver)
                    }
                    // `when(fulfilled:)` delivers on a Dispatch global queue (rule I3, Tomorrowland.docc/BehaviourRules.md); the
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
            check(counter.count == iterations * 1000, "W7 \(label): \(counter.count) != \(iterations * 1000)")
        }

        // A request deadline that does not fire: each request gets a 30 s `timeout` on the loop,
        // then the loop fulfils it at once, which cancels the timer. The timeout's result arrives
        // on `context` (a hop, the library's rule); its observer is `.immediate`, so the only hop
        // per request is the timeout's own, and NIO's side (a `scheduleTask` deadline cancelled
        // by a `whenComplete` that runs inside `succeed`) has the same one callback per request.
        // Rounds of 1,000 requests, the next started from the last result of the round (see the
        // header): a server has its in-flight requests' deadlines pending, not 100,000 at once.
        workloads["W8"] = { iterations in
            counter.reset()
            let rounds = Chains(remaining: iterations * w8RoundsPerIteration)
            loop.runAndWait { done in
                @Sendable func startRound() {
                    for i in 0..<w8RequestsPerRound {
                        let (request, resolver) = Promise<Int, Never>.makeWithResolver()
                        let deadline = request.timeout(on: context, delay: .seconds(30))
                        if i == w8RequestsPerRound - 1 {
                            // Results reach the loop's FIFO in resolution order: this one comes last.
                            deadline.tap(on: .immediate) { result in
                                counter.add(result.value == nil ? 0 : 1)
                                if rounds.next() { startRound() } else { done() }
                            }
                        } else {
                            deadline.tap(on: .immediate) { result in counter.add(result.value == nil ? 0 : 1) }
                        }
                        resolver.fulfill(with: i)
                    }
                }
                startRound()
            }
            check(counter.count == iterations * 100_000, "W8 \(label): \(counter.count) != \(iterations * 100_000)")
        }

        return workloads
    }
}

/// W8's shape on both sides: 100 rounds of 1,000 requests, 100,000 requests per iteration.
let w8RoundsPerIteration = 100
/// The requests of one W8 round: the deadlines that are pending at once on our side.
let w8RequestsPerRound = 1000
