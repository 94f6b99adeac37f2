import Testing
import Tomorrowland
import TomorrowlandLoop

/// The README's event-loop example, so that the README stays true.
@Suite("README: a promise chain with a timeout on an EventLoop")
struct ReadmeLoopExampleTests {
    @Test func chainWithTimeoutRunsOnTheLoop() {
        let loop = EventLoop()
        let answer = Promise<Int, Never>(on: .loop(loop)) { $0.fulfill(with: 42) }
            .map(on: .loop(loop)) { $0 + 1 }
            .timeout(on: .loop(loop), delay: .seconds(5))  // a loop timer
        let result = loop.run(until: answer)  // drives the loop until it resolves: .value(43)
        loop.shutdown()
        #expect(result.value == 43)
    }
}
