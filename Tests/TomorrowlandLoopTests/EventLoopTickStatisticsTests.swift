import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop tick statistics")
struct EventLoopTickStatisticsTests {
    @Test func eachTickReportsTheWorkItRanAndTheTotalsAddUp() {
        let loop = EventLoop()
        let ticks = Recorder<LoopTick>()
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
        let ticks = Recorder<LoopTick>()
        // On before the loop runs: settings take effect at the next tick, so work submitted right
        // after enabling them on a running loop may run in an unmeasured tick.
        loop.enableTickStatistics { ticks.record($0) }
        let ended = DispatchSemaphore(value: 0)
        Thread {
            loop.run()
            ended.signal()
        }.start()
        loop.execute {}
        // Until the observer saw that tick: its end was measured before the observer ran, so the
        // idle gap below starts after it, however late the loop's thread then gets a core.
        #expect(waitUntil { ticks.values.contains { $0.itemCount >= 1 } })
        let seenBeforeGap = ticks.count
        // The loop now waits in libevent until the next submission.
        usleep(200_000)
        let second = DispatchSemaphore(value: 0)
        loop.execute {
            usleep(30_000)
            second.signal()
        }
        second.wait()
        loop.shutdown()
        ended.wait()
        // The ticks from the gap to the first one that ran work: the gap is their waiting time,
        // whether the loop woke once or more in between (by position, not by a duration that a
        // preempted thread may stretch in any tick).
        let afterGap = ticks.values.dropFirst(seenBeforeGap)
        let busyIndex = afterGap.firstIndex { $0.itemCount >= 1 }
        let busy = busyIndex.map { afterGap[$0] }
        #expect((busy?.busyTime ?? .zero) >= .milliseconds(30))
        let waited = busyIndex.map { afterGap[...$0].reduce(Duration.zero) { $0 + $1.waitingTime } } ?? .zero
        #expect(waited >= .milliseconds(150))
        #expect(loop.tickTotals.busyTime >= .milliseconds(30))
    }

    @Test func disablingStopsTheObserverAndKeepsTheTotals() {
        let loop = EventLoop()
        let ticks = Recorder<LoopTick>()
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
