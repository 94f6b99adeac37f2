import Dispatch
import Foundation
import Synchronization
import Testing

@testable import TomorrowlandLoop

@Suite("EventLoop cross-thread stress")
struct EventLoopStressTests {
    @Test func oneMillionSubmissionsFromFourThreadsAllRunInPerThreadOrder() {
        let threads = 4
        let perThread = 250_000
        let loop = EventLoop()
        // Loop-confined: the next index expected from each thread, and the number of items out of
        // order (must stay 0).
        let expected = LoopConfined([Int](repeating: 0, count: threads))
        let outOfOrder = LoopConfined(0)
        let total = LoopConfined(0)
        let runner = LoopThread(loop)
        #expect(runner.waitUntilRunning())
        runConcurrently(threads) { thread in
            for index in 0..<perThread {
                loop.execute {
                    if expected.value[thread] != index { outOfOrder.value += 1 }
                    expected.value[thread] = index + 1
                    total.value += 1
                    if total.value == threads * perThread { loop.stop() }
                }
            }
        }
        #expect(runner.join(seconds: 120))
        #expect(total.value == threads * perThread)
        #expect(outOfOrder.value == 0)
        #expect(expected.value == [Int](repeating: perThread, count: threads))
        loop.shutdown()
    }
}
