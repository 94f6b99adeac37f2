import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// Many threads submitting into an `EventLoopGroup`, and promise chains that hop between its
/// loops while other threads race resolution, cancel requests and token invalidation. Nothing
/// lost: every submission runs once on its loop; every chain's last promise resolves and its
/// observer runs exactly once; every callback runs at most once, and is skipped only where the
/// rules say so.
@Suite("EventLoopGroup stress")
struct EventLoopGroupStressTests {
    @Test("400,000 submissions from eight threads into a four-loop group all run once, on their loop")
    func crossThreadSubmissionsIntoAGroup() {
        let group = EventLoopGroup(loopCount: 4)
        let threads = 8
        let perThread = 50_000
        let ran = Atomic<Int>(0)
        let offLoop = Atomic<Int>(0)
        runConcurrently(threads) { _ in
            for _ in 0..<perThread {
                let loop = group.next()
                loop.execute {
                    if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                    ran.add(1, ordering: .relaxed)
                }
            }
        }
        let all = waitUntil(timeout: .seconds(30)) { ran.load(ordering: .relaxed) == threads * perThread }
        group.syncShutdownGracefully()
        #expect(all)
        #expect(ran.load(ordering: .relaxed) == threads * perThread, "a submission ran twice or was lost")
        #expect(offLoop.load(ordering: .relaxed) == 0)
    }

    /// What one chain saw.
    final class Chain: Sendable {
        let mapRuns = Atomic<Int>(0)
        let innerRuns = Atomic<Int>(0)
        let finalRuns = Atomic<Int>(0)
        /// 0 pending, 1 value, 2 cancelled, 3 anything else.
        let outcome = Atomic<Int>(0)
        let value = Atomic<Int>(0)
    }

    @Test("5,000 promise chains across four loops, racing fulfil, cancel requests and invalidation, all resolve")
    func chainsAcrossLoopsRacingCancellation() {
        let group = EventLoopGroup(loopCount: 4)
        let count = 5000
        let chains = (0..<count).map { _ in Chain() }
        var resolvers: [Promise<Int, String>.Resolver] = []
        var tails: [Promise<Int, String>] = []
        var tokens: [PromiseInvalidationToken] = []
        for index in 0..<count {
            let chain = chains[index]
            let (root, resolver) = Promise<Int, String>.makeWithResolver()
            // A cancel request reaching the root cancels it, racing the fulfil.
            resolver.onRequestCancel(on: .immediate) { $0.cancel() }
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            let inner = group.next()
            let tail =
                root
                .map(on: .loop(group.next()), token: token) { value -> Int in
                    chain.mapRuns.add(1, ordering: .relaxed)
                    return value &+ 1
                }
                .flatMap(on: .loop(group.next())) { value in
                    Promise<Int, String>(on: .loop(inner)) { innerResolver in
                        chain.innerRuns.add(1, ordering: .relaxed)
                        innerResolver.fulfill(with: value &* 2)
                    }
                }
                .timeout(on: .loop(group.next()), delay: .seconds(600))
                .mapError(on: .immediate) { _ in "timeout or rejection" }
            tail.always(on: .loop(group.next())) { result in
                chain.finalRuns.add(1, ordering: .relaxed)
                switch result {
                case .value(let value):
                    chain.value.store(value, ordering: .relaxed)
                    chain.outcome.store(1, ordering: .releasing)
                case .cancelled: chain.outcome.store(2, ordering: .releasing)
                case .error: chain.outcome.store(3, ordering: .releasing)
                }
            }
            resolvers.append(resolver)
            tails.append(tail)
            tokens.append(token)
        }
        let frozenResolvers = resolvers
        let frozenTails = tails
        let frozenTokens = tokens
        runConcurrently(3) { role in
            for index in 0..<count {
                switch role {
                case 0: frozenResolvers[index].fulfill(with: index)
                case 1: if index % 3 == 0 { frozenTokens[index].invalidate() }
                default: if index % 5 == 0 { frozenTails[index].requestCancel() }
                }
            }
        }
        tails = []
        let settled = waitUntil(timeout: .seconds(30)) {
            chains.allSatisfy { $0.finalRuns.load(ordering: .acquiring) == 1 }
        }
        group.syncShutdownGracefully()
        #expect(settled, "some chains never resolved")
        var counts = [0, 0, 0, 0]
        for (index, chain) in chains.enumerated() {
            let outcome = chain.outcome.load(ordering: .acquiring)
            counts[outcome] += 1
            #expect(chain.finalRuns.load(ordering: .relaxed) == 1)
            #expect(chain.mapRuns.load(ordering: .relaxed) <= 1)
            #expect(chain.innerRuns.load(ordering: .relaxed) <= 1)
            #expect(outcome == 1 || outcome == 2, "chain \(index) ended with an error")
            if outcome == 1 {
                // A value can only come through both callbacks, computed from the index.
                #expect(chain.value.load(ordering: .relaxed) == (index + 1) * 2)
                #expect(chain.mapRuns.load(ordering: .relaxed) == 1 && chain.innerRuns.load(ordering: .relaxed) == 1)
            } else if index % 3 != 0 && index % 5 != 0 {
                Issue.record("chain \(index) was cancelled with neither an invalidation nor a cancel request")
            }
        }
        print("EventLoopGroupStressTests: \(count) chains: \(counts[1]) fulfilled, \(counts[2]) cancelled")
    }
}
