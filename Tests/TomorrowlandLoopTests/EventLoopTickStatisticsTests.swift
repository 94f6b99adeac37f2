import Foundation
import Testing
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop tick statistics")
struct EventLoopTickStatisticsTests {
    @Test func eachTickReportsTheWorkItRanAndTheTotalsAddUp() {
        let loop = EventLoop()
        let ticks = Recorder<EventLoopTick>()
        loop.enableTickStatistics { ticks.record($0) }
        for _ in 0..<3 { loop.execute {} }
        loop.runUntilIdle()
        #expect(ticks.values.map(\.itemCount).reduce(0, +) == 3)
        #expect(ticks.values.first?.itemCount == 3)
        let totals = loop.tickTotals
        #expect(totals.itemCount == 3)
        #expect(totals.tickCount == UInt64(ticks.count))
        #expect(totals.stallCount == 0)
        loop.shutdown()
    }

    @Test func busyTimeCoversTheWorkAndWaitingTimeTheIdleGap() {
        let loop = EventLoop()
        let ticks = Recorder<EventLoopTick>()
        let ended = DispatchSemaphore(value: 0)
        Thread {
            loop.run()
            ended.signal()
        }.start()
        loop.enableTickStatistics { ticks.record($0) }
        let first = DispatchSemaphore(value: 0)
        loop.execute { first.signal() }
        first.wait()
        // The loop now waits in libevent until the next submission.
        usleep(100_000)
        let second = DispatchSemaphore(value: 0)
        loop.execute {
            usleep(30_000)
            second.signal()
        }
        second.wait()
        loop.shutdown()
        ended.wait()
        let busy = ticks.values.first { $0.busyTime >= .milliseconds(30) }
        #expect(busy != nil)
        #expect((busy?.waitingTime ?? .zero) >= .milliseconds(90))
        #expect(loop.tickTotals.busyTime >= .milliseconds(30))
    }

    @Test func disablingStopsTheObserverAndKeepsTheTotals() {
        let loop = EventLoop()
        let ticks = Recorder<EventLoopTick>()
        loop.enableTickStatistics { ticks.record($0) }
        loop.execute {}
        loop.runUntilIdle()
        loop.disableTickStatistics()
        let seen = ticks.count
        let totals = loop.tickTotals
        loop.execute {}
        loop.runUntilIdle()
        #expect(ticks.count == seen)
        #expect(loop.tickTotals == totals)
        #expect(totals.itemCount == 1)
        loop.shutdown()
    }
}
