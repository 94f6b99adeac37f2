import Dispatch
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Several threads racing resolution, registration, cancel requests and invalidation (B1, K1–K3;
/// issue 6, "stress test"). Each test is bounded to a few seconds and must be clean under
/// `swift test --sanitize=thread`.
@Suite("Concurrency stress")
struct ConcurrencyStressTests {
    typealias IntPromise = Promise<Int, String>

    struct Call: Sendable, Hashable {
        var round: Int
        var callback: Int
        var result: String
    }

    /// Runs every closure of every round on a concurrent queue, so that the closures of one round
    /// race each other, and waits (without blocking a thread) until all have returned.
    static func race(rounds: Int, _ makeRound: (Int) -> [@Sendable () -> Void]) async {
        let queue = DispatchQueue(label: "stress.race", attributes: .concurrent)
        let group = DispatchGroup()
        for round in 0..<rounds {
            for work in makeRound(round) {
                queue.async(group: group, execute: work)
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }

    @Test("racing fulfil, requestCancel, registration and result reads runs every callback exactly once (B1, K1, K3)")
    func raceResolveRegisterCancel() async {
        let rounds = 1000
        let perThread = 12
        let callbackQueue = makeTaggedQueue("stress.callbacks")
        let calls = Recorder<Call>()
        let promises = Locked<[Int: IntPromise]>([:])
        let children = Locked<[Int: Promise<Int, String>]>([:])
        let contexts: [PromiseContext] = [
            .immediate, .queue(callbackQueue), .default, .nowOr(.immediate), .nowOr(.queue(callbackQueue)),
        ]

        await Self.race(rounds: rounds) { round in
            let (promise, resolver) = IntPromise.makeWithResolver()
            promises.withLock { $0[round] = promise }
            var work: [@Sendable () -> Void] = []
            for thread in 0..<3 {
                work.append {
                    for index in 0..<perThread {
                        let id = thread * perThread + index
                        let context = contexts[id % contexts.count]
                        promise.tap(on: context) {
                            calls.record(Call(round: round, callback: id, result: describe($0)))
                        }
                    }
                    let child = promise.map(on: contexts[thread]) { $0 &* 2 }
                    children.withLock { $0[round * 3 + thread] = child }
                }
            }
            work.append {
                resolver.onRequestCancel(on: .immediate) { $0.cancel() }
            }
            work.append { promise.requestCancel() }
            work.append { resolver.fulfill(with: round) }
            work.append {
                // Readers racing the writer must see either nothing or the whole result.
                for _ in 0..<50 {
                    if let result = promise.result {
                        #expect(result == .value(round) || result == .cancelled)
                    }
                }
            }
            return work
        }

        let expected = rounds * 3 * perThread
        #expect(await eventually { calls.count >= expected }, "only \(calls.count) of \(expected) callbacks ran")
        await drain(callbackQueue)
        let all = calls.values
        #expect(all.count == expected, "some callback ran more than once")
        #expect(Set(all.map { [$0.round, $0.callback] }).count == expected)
        let results = promises.value
        for (round, roundCalls) in Dictionary(grouping: all, by: \.round) {
            let final = describe(results[round]?.result)
            #expect(final == "value(\(round))" || final == "cancelled")
            #expect(
                roundCalls.allSatisfy { $0.result == final },
                "round \(round) callbacks disagree with the result \(final)")
        }
        for (key, child) in children.value {
            let round = key / 3
            let result = await waitForResult(child)
            let parentResult = results[round]?.result
            #expect(result == parentResult.map { $0.map { $0 &* 2 } })
        }
    }

    @Test(
        "concurrent registrations on one promise, then resolution: every callback runs once, in order per serial queue (B1, B2)"
    )
    func concurrentRegistrationsThenResolution() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let queue = makeTaggedQueue("stress.order")
        let calls = Recorder<[Int]>()
        await Self.race(rounds: 1) { _ in
            (0..<4).map { thread in
                {
                    for index in 0..<500 {
                        promise.tap(on: .queue(queue)) { _ in calls.record([thread, index]) }
                    }
                }
            }
        }
        resolver.fulfill(with: 1)
        await drain(queue)
        let all = calls.values
        #expect(all.count == 2000)
        for thread in 0..<4 {
            let indices = all.filter { $0[0] == thread }.map { $0[1] }
            #expect(indices == Array(0..<500), "thread \(thread)'s registrations ran out of order")
        }
    }

    @Test("children requesting cancellation from several threads ask the sealed parent exactly once (D1, K1)")
    func racingChildCancelRequests() async {
        let rounds = 2000
        let tallies = Recorder<Int>()
        await Self.race(rounds: rounds) { _ in
            let (children, resolver, parentRequests) = withSealedParent(IntPromise.self) { parent in
                (0..<8).map { _ in parent.map(on: .immediate) { $0 } }
            }
            let finished = SharedCounter()
            return (0..<4).map { thread in
                {
                    children[thread * 2].requestCancel()
                    children[thread * 2 + 1].cancellable.requestCancel()
                    // The last thread to finish sees every request made, including the one that
                    // brought the parent's observer count to zero.
                    if finished.increment() == 4 {
                        tallies.record(parentRequests.count)
                        withExtendedLifetime(resolver) {}
                    }
                }
            }
        }
        #expect(tallies.count == rounds)
        #expect(tallies.values.allSatisfy { $0 == 1 }, "parent request counts: \(Set(tallies.values))")
    }

    @Test(
        "invalidation racing resolution: each guarded callback runs at most once and each child resolves once (E1, K1)")
    func invalidationRacingResolution() async {
        let rounds = 2000
        let ran = Recorder<Int>()
        let outcomes = Recorder<String>()
        await Self.race(rounds: rounds) { round in
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            let (promise, resolver) = IntPromise.makeWithResolver()
            return [
                {
                    let child = promise.map(on: .immediate, token: token) { value -> Int in
                        ran.record(round)
                        return value
                    }
                    child.tap(on: .immediate) { outcomes.record("\(round) \(describe($0))") }
                },
                { token.invalidate() },
                { resolver.fulfill(with: round) },
                { token.requestCancelOnInvalidate(promise) },
            ]
        }
        #expect(await eventually { outcomes.count == rounds })
        let ranRounds = ran.values
        #expect(Set(ranRounds).count == ranRounds.count, "a callback ran twice")
        for line in outcomes.values {
            let parts = line.split(separator: " ")
            let round = Int(parts[0])!
            let result = String(parts[1])
            if ranRounds.contains(round) {
                #expect(result == "value(\(round))")
            } else {
                #expect(result == "cancelled")
            }
        }
    }
}

extension ConcurrencyStressTests {
    @Test("registrations racing invalidations on one token are never lost (E5, K1)")
    func tokenRegistrationsRacingInvalidation() async {
        let token = PromiseInvalidationToken(invalidateOnDeinit: false)
        let requested = Recorder<Int>()
        let kept = Locked<[IntPromise]>([])
        let perThread = 500
        await Self.race(rounds: 1) { _ in
            var work: [@Sendable () -> Void] = (0..<3).map { thread in
                {
                    for index in 0..<perThread {
                        let id = thread * perThread + index
                        let (promise, resolver) = IntPromise.makeWithResolver()
                        resolver.onRequestCancel(on: .immediate) { _ in requested.record(id) }
                        kept.withLock { $0.append(promise) }
                        token.requestCancelOnInvalidate(promise)
                    }
                }
            }
            work.append {
                for _ in 0..<200 { token.invalidate() }
            }
            work.append {
                for _ in 0..<200 { token.cancelWithoutInvalidating() }
            }
            return work
        }
        // Whatever the racing invalidations took, one more takes the rest.
        token.invalidate()
        let ids = requested.values
        #expect(ids.count == 3 * perThread)
        #expect(Set(ids).count == 3 * perThread)
        #expect(InvalidationTokenTests.callbackNodes(token) == 0)
        withExtendedLifetime(kept.value) {}
    }
}

/// A counter several closures share by reference.
final class SharedCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// Adds one and returns the new value.
    func increment() -> Int {
        value.add(1, ordering: .acquiringAndReleasing).newValue
    }
}
