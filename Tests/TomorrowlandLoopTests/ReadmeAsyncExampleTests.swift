import Testing
import Tomorrowland
import TomorrowlandLoop

/// The Swift Concurrency bridges used together, as one program would: awaiting a promise, a
/// promise of async work cancelled, an actor on a loop, `LoopBound` state, and a graceful
/// shutdown of the group. The article "Swift Concurrency" shows each part.
@Suite("Promises and Swift Concurrency, used together")
struct ReadmeAsyncExampleTests {
    actor Counter {  // an actor that runs on the loop's thread
        let loop: EventLoop
        var count = 0
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
        init(loop: EventLoop) { self.loop = loop }
        func increment() -> Int {
            count += 1
            return count
        }
    }

    final class Stats { var requests = 0 }  // not Sendable

    @Test func theBridgesWorkAsTheReadmeSays() async throws {
        let group = EventLoopGroup(loopCount: 1)
        let loop = group.next()

        func fetchUser(_ id: Int) -> Promise<String, Swift.Error> {  // any promise-returning API
            Promise(on: .loop(loop)) { $0.fulfill(with: "user \(id)") }
        }

        let name = try await fetchUser(7).value  // the error, or CancellationError if cancelled
        let outcome = await fetchUser(7).resolvedResult  // .value / .error / .cancelled, never throws

        let slow = StdPromise<String> {  // async work as a promise
            try await Task.sleep(for: .seconds(60))
            return "done"
        }
        slow.requestCancel()  // cancels the Task; `slow` ends cancelled

        let count = await Counter(loop: loop).increment()

        let stats = LoopBound(Stats(), on: loop)  // usable only on the loop (checked)
        let recorded = fetchUser(7).then(on: .loop(loop)) { _ in stats.value.requests += 1 }

        #expect(name == "user 7")
        #expect(outcome.value == "user 7")
        #expect(await slow.resolvedResult.isCancelled)
        #expect(count == 1)
        _ = try await recorded.value
        let requests = await Promise<Int, Swift.Error>(on: .loop(loop)) { $0.fulfill(with: stats.value.requests) }
            .resolvedResult.value
        #expect(requests == 1)

        _ = await recorded.resolvedResult
        _ = await group.shutdownGracefully().resolvedResult  // once nothing more is aimed at its loops
        #expect(group.loops.allSatisfy { $0.isShutdownComplete })
    }
}
