import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop.now")
struct EventLoopNowTests {
    @Test func aTimersDelayCountsFromTheTicksNow() {
        let loop = EventLoop()
        let readings = Locked<(scheduled: Duration, fired: Duration)?>(nil)
        let done = Promise<Void, NoError>(on: .loop(loop)) { resolver in
            let scheduled = loop.now
            _ = loop.schedule(after: .milliseconds(20)) {
                readings.withLock { $0 = (scheduled, loop.now) }
                resolver.fulfill(with: ())
            }
        }
        _ = loop.run(until: done)
        let (scheduled, fired) = readings.value ?? (.zero, .zero)
        // Inside a tick `now` is the tick's time, the time the delay counts from: the timer's
        // tick cannot begin before its deadline.
        #expect(fired - scheduled >= .milliseconds(20))
        loop.shutdown()
    }

    @Test func nowStaysTheSameWithinOneTickAndReadsTheClockOutsideOne() {
        let loop = EventLoop()
        let sameTick = Promise<Bool, NoError>(on: .loop(loop)) { resolver in
            let first = loop.now
            var spin = 0
            for index in 0..<100_000 { spin &+= index }
            resolver.fulfill(with: loop.now == first && spin != 0)
        }
        #expect(loop.run(until: sameTick) == .value(true))
        let outside = loop.now
        let later = loop.now
        #expect(later >= outside)
        #expect(outside > .zero)
        loop.shutdown()
    }
}
