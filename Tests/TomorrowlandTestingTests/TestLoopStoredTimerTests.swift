import Dispatch
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

/// `TestLoop.storeTimer(_:after:)`: the test loop keeps promise timers in its virtual timers as
/// an `EventLoop` does on its thread, in the same order as its other timers, and releases them
/// unrun at shutdown.
@Suite("TestLoop stored promise timers")
struct TestLoopStoredTimerTests {
    @Test func storedTimersFireInSchedulingOrderWithOtherTimersOfTheSameDeadline() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(1)) { log.record("closure 1") }
            let first = loop.storeTimer(LoggingTimer("stored 1", log, loop: loop), after: .seconds(1))
            _ = loop.schedule(after: .seconds(1)) { log.record("closure 2") }
            let second = loop.storeTimer(LoggingTimer("stored 2", log, loop: loop), after: .seconds(1))
            #expect(first != nil && second != nil)
            #expect(loop.pendingWorkCount == 4)
            loop.advance(by: .seconds(1))
            #expect(
                log.values == [
                    "closure 1", "stored 1 fired at 1.0 seconds", "closure 2", "stored 2 fired at 1.0 seconds",
                ])
        }
    }

    @Test func storedTimersOfRepeatedAndChangingDelaysFireEachAtItsOwnDeadline() throws {
        // The loop converts a delay once for a run of timers with that delay: a change of delay,
        // and a return to an earlier one, each still count their own.
        try withTestLoop { loop in
            let log = Recorder<String>()
            for (name, delay) in [
                ("a", Duration.seconds(3)), ("b", .seconds(3)), ("c", .seconds(1)), ("d", .seconds(3)),
                ("e", .milliseconds(1500)), ("f", .seconds(1)),
            ] {
                _ = loop.storeTimer(LoggingTimer(name, log, loop: loop), after: delay)
            }
            loop.advance(by: .seconds(3))
            #expect(
                log.values == [
                    "c fired at 1.0 seconds", "f fired at 1.0 seconds", "e fired at 1.5 seconds",
                    "a fired at 3.0 seconds", "b fired at 3.0 seconds", "d fired at 3.0 seconds",
                ])
        }
    }

    @Test func cancellingFromAnyThreadRemovesTheTimerAndReleasesItAtOnce() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let spy = ReleaseSpy()
            let id = loop.storeTimer(LoggingTimer("stored", log, token: spy.token()), after: .seconds(1))
            #expect(id != nil)
            if let id { DispatchQueue.global().sync { loop.cancelStoredTimer(id) } }
            #expect(spy.releasedCount == 1)
            #expect(loop.pendingWorkCount == 0)
            loop.advance(by: .seconds(2))
            #expect(log.values.isEmpty)
        }
    }

    @Test func shutdownReleasesPendingStoredTimersUnrunAndLaterOnesAreNotStored() throws {
        let loop = TestLoop()
        let log = Recorder<String>()
        _ = loop.storeTimer(LoggingTimer("stored", log), after: .seconds(1))
        loop.shutdown()
        #expect(log.values == ["stored released"])
        #expect(loop.storeTimer(LoggingTimer("late", log), after: .seconds(1)) == nil)
        #expect(log.values == ["stored released"])
    }

    @Test func aTimeoutOnTheLoopIsOneStoredTimerThatItsUpstreamRemovesAtOnce() throws {
        try withTestLoop { loop in
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            let timeout = upstream.timeout(on: .loop(loop), delay: .seconds(30))
            #expect(loop.pendingWorkCount == 1)
            resolver.fulfill(with: 4)
            // The timer left inside `fulfill`; what is pending is the hop of the result.
            #expect(loop.nextTimerDeadline == nil)
            let value = try loop.expectValue(of: timeout)
            #expect(value == 4)
        }
    }
}

/// A stored timer that logs its calls with the loop's virtual time.
private final class LoggingTimer: PromiseTimerJob {
    let name: String
    let log: Recorder<String>
    let loop: TestLoop?
    let token: ReleaseSpy.Token?

    init(_ name: String, _ log: Recorder<String>, loop: TestLoop? = nil, token: ReleaseSpy.Token? = nil) {
        self.name = name
        self.log = log
        self.loop = loop
        self.token = token
    }

    func timerFired() {
        log.record("\(name) fired at \(loop.map { "\($0.now)" } ?? "?")")
    }

    func timerReleased() {
        log.record("\(name) released")
    }
}
