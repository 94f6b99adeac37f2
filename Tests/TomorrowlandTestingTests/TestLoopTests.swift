import Dispatch
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("TestLoop")
struct TestLoopTests {
    // MARK: - Nothing runs until driven

    @Test func theClockStartsAtZeroAndNothingRunsUntilTheTestDrivesTheLoop() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit { log.record("submitted") }
            _ = loop.schedule(after: .zero) { log.record("zero timer") }
            #expect(loop.now == .zero)
            #expect(log.values.isEmpty)
            #expect(loop.readyCount == 1)
            #expect(loop.timerCount == 1)
            #expect(loop.pendingWorkCount == 2)
            loop.run()
            #expect(log.values == ["submitted", "zero timer"])
            #expect(loop.pendingWorkCount == 0)
        }
    }

    @Test func workSubmittedFromTheLoopRunsAfterTheCurrentItemNotInsideTheCall() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit {
                loop.submit { log.record("inner") }
                log.record("outer, after submitting")
            }
            loop.submit { log.record("second") }
            loop.run()
            #expect(log.values == ["outer, after submitting", "second", "inner"])
        }
    }

    @Test func runRunsReadyWorkInFIFOOrderIncludingWhatItSubmits() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            for index in 0..<3 {
                loop.submit {
                    log.record("\(index)")
                    loop.submit { log.record("\(index).a") }
                }
            }
            loop.run()
            #expect(log.values == ["0", "1", "2", "0.a", "1.a", "2.a"])
            #expect(loop.readyCount == 0)
        }
    }

    @Test func runNeitherMovesTheClockNorFiresLaterTimers() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .nanoseconds(1)) { log.record("1 ns") }
            loop.run()
            #expect(log.values.isEmpty)
            #expect(loop.now == .zero)
            #expect(loop.nextTimerDeadline == .nanoseconds(1))
            loop.advance(by: .nanoseconds(1))
            #expect(log.values == ["1 ns"])
        }
    }

    // MARK: - Advancing

    @Test func advanceFiresTimersInDeadlineOrderAndEqualDeadlinesInSchedulingOrder() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(3)) { log.record("3s") }
            _ = loop.schedule(after: .seconds(1)) { log.record("1s first") }
            _ = loop.schedule(after: .seconds(2)) { log.record("2s") }
            _ = loop.schedule(after: .seconds(1)) { log.record("1s second") }
            _ = loop.schedule(after: .seconds(1)) { log.record("1s third") }
            loop.advance(by: .seconds(3))
            #expect(log.values == ["1s first", "1s second", "1s third", "2s", "3s"])
        }
    }

    @Test func advanceSetsNowToEachTimersDeadlineBeforeRunningItThenToTheTarget() throws {
        try withTestLoop { loop in
            let seen = Locked<[Duration]>([])
            for milliseconds in [30, 10, 20] {
                _ = loop.schedule(after: .milliseconds(milliseconds)) {
                    let now = loop.now
                    seen.withLock { $0.append(now) }
                }
            }
            loop.advance(by: .milliseconds(25))
            #expect(seen.withLock { $0 } == [.milliseconds(10), .milliseconds(20)])
            #expect(loop.now == .milliseconds(25))
            loop.advance(to: .milliseconds(40))
            #expect(seen.withLock { $0 } == [.milliseconds(10), .milliseconds(20), .milliseconds(30)])
            #expect(loop.now == .milliseconds(40))
        }
    }

    @Test func workSubmittedOrScheduledByTimersRunsInTheSameCallAtTheVirtualTimeItWasMeantFor() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(1)) {
                log.record("timer@\(loop.nowInMilliseconds)")
                loop.submit { log.record("submitted@\(loop.nowInMilliseconds)") }
                _ = loop.schedule(after: .seconds(2)) { log.record("2s later@\(loop.nowInMilliseconds)") }
                _ = loop.schedule(after: .seconds(10)) { log.record("10s later@\(loop.nowInMilliseconds)") }
            }
            loop.advance(by: .seconds(5))
            #expect(log.values == ["timer@1000", "submitted@1000", "2s later@3000"])
            #expect(loop.now == .seconds(5))
            #expect(loop.timerCount == 1)
            #expect(loop.nextTimerDeadline == .seconds(11))
            loop.advance(to: .seconds(11))
            #expect(log.values.last == "10s later@11000")
        }
    }

    @Test func workDueAtTheSameInstantRunsAfterWhatWasAlreadyDueThen() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(1)) {
                log.record("A")
                loop.submit { log.record("submitted by A") }
                _ = loop.schedule(after: .zero) { log.record("zero timer from A") }
            }
            _ = loop.schedule(after: .seconds(1)) { log.record("B") }
            loop.advance(by: .seconds(1))
            #expect(log.values == ["A", "B", "submitted by A", "zero timer from A"])
        }
    }

    @Test func readyWorkRunsBeforeTheClockMoves() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(1)) { log.record("timer@\(loop.nowInMilliseconds)") }
            loop.submit { log.record("ready@\(loop.nowInMilliseconds)") }
            loop.advance(by: .seconds(2))
            #expect(log.values == ["ready@0", "timer@1000"])
        }
    }

    @Test func aNegativeDelayMeansNowAndRunsAfterWorkAlreadyDue() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.advance(by: .seconds(1))
            loop.submit { log.record("ready") }
            _ = loop.schedule(after: .seconds(-5)) { log.record("negative@\(loop.nowInMilliseconds)") }
            #expect(loop.nextTimerDeadline == .seconds(1))
            loop.run()
            #expect(log.values == ["ready", "negative@1000"])
        }
    }

    @Test func advancingByZeroIsRun() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit { log.record("ready") }
            loop.advance(by: .zero)
            #expect(log.values == ["ready"])
            #expect(loop.now == .zero)
        }
    }

    @Test func subNanosecondDelaysRoundUpSoTimersNeverFireEarly() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: Duration(secondsComponent: 0, attosecondsComponent: 1)) { log.record("fired") }
            loop.run()
            #expect(log.values.isEmpty)
            loop.advance(by: .nanoseconds(1))
            #expect(log.values == ["fired"])
        }
    }

    @Test func runAllDrainsEveryTimerAndStopsTheClockAtTheLastDeadline() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit { log.record("ready@\(loop.nowInMilliseconds)") }
            _ = loop.schedule(after: .seconds(2)) {
                log.record("2s@\(loop.nowInMilliseconds)")
                _ = loop.schedule(after: .seconds(3)) { log.record("chained@\(loop.nowInMilliseconds)") }
                loop.submit { log.record("submitted@\(loop.nowInMilliseconds)") }
            }
            _ = loop.schedule(after: .seconds(1)) { log.record("1s@\(loop.nowInMilliseconds)") }
            loop.runAll()
            #expect(log.values == ["ready@0", "1s@1000", "2s@2000", "submitted@2000", "chained@5000"])
            #expect(loop.now == .seconds(5))
            #expect(loop.pendingWorkCount == 0)
        }
    }

    // MARK: - Cancelling

    @Test func cancelledTimersNeverRunAndTheirWorkIsReleasedAtOnce() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let spy = ReleaseSpy()
            var handles: [any PromiseScheduledWork] = []
            for index in 0..<6 {
                let token = spy.token()
                handles.append(
                    loop.schedule(after: .seconds(Int64(index))) {
                        withExtendedLifetime(token) { log.record("\(index)") }
                    })
            }
            handles[1].cancel()
            handles[4].cancel()
            #expect(spy.releasedCount == 2)
            #expect(loop.timerCount == 4)
            loop.advance(by: .seconds(10))
            #expect(log.values == ["0", "2", "3", "5"])
            #expect(spy.releasedCount == 6)
        }
    }

    @Test func cancellingTwiceOrAfterTheTimerRanDoesNothing() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let ran = loop.schedule(after: .seconds(1)) { log.record("ran") }
            let other = loop.schedule(after: .seconds(2)) { log.record("other") }
            loop.advance(by: .seconds(1))
            ran.cancel()
            ran.cancel()
            #expect(loop.timerCount == 1)
            loop.advance(by: .seconds(1))
            #expect(log.values == ["ran", "other"])
            other.cancel()
        }
    }

    @Test func aTimerCanCancelALaterTimerMidFlight() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let later = Locked<(any PromiseScheduledWork)?>(nil)
            _ = loop.schedule(after: .seconds(1)) {
                log.record("first")
                later.withLock { $0 }?.cancel()
            }
            later.withLock { $0 = loop.schedule(after: .seconds(1)) { log.record("same deadline, cancelled") } }
            loop.advance(by: .seconds(2))
            #expect(log.values == ["first"])
            #expect(loop.pendingWorkCount == 0)
        }
    }

    @Test func cancellingReleasesTheWorkOutsideTheLoopsLockSoItsDeinitializersMayUseTheLoop() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let spy = ReleaseSpy()
            let token = spy.token { loop.submit { log.record("submitted from a deinitializer") } }
            let handle = loop.schedule(after: .seconds(1)) { withExtendedLifetime(token) {} }
            _ = consume token
            handle.cancel()  // would deadlock if the work were released under the lock
            #expect(spy.releasedCount == 1)
            loop.run()
            #expect(log.values == ["submitted from a deinitializer"])
        }
    }

    @Test func workThatRanIsReleasedOutsideTheLoopsLockToo() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let spy = ReleaseSpy()
            let token = spy.token { loop.submit { log.record("after release") } }
            loop.submit { withExtendedLifetime(token) { log.record("ran") } }
            _ = consume token
            loop.run()
            #expect(log.values == ["ran", "after release"])
            #expect(spy.releasedCount == 1)
        }
    }

    @Test func aDeinitializedLoopReleasesItsPendingWork() throws {
        let spy = ReleaseSpy()
        try withTestLoop { loop in
            loop.expectPendingWorkAtEnd()
            let ready = spy.token()
            let timer = spy.token()
            loop.submit { withExtendedLifetime(ready) {} }
            _ = loop.schedule(after: .seconds(1)) { withExtendedLifetime(timer) {} }
        }
        #expect(spy.releasedCount == 2)
    }

    // MARK: - Introspection and exhaustivity

    @Test func isCurrentIsTrueOnlyInsideWorkTheLoopRuns() throws {
        try withTestLoop { loop in
            try withTestLoop { other in
                let seen = Locked<[String: Bool]>([:])
                loop.submit { seen.withLock { $0["submitted"] = loop.isCurrent } }
                _ = loop.schedule(after: .seconds(1)) {
                    let current = loop.isCurrent
                    let otherCurrent = other.isCurrent
                    seen.withLock {
                        $0["timer"] = current
                        $0["other loop"] = otherCurrent
                    }
                }
                #expect(!loop.isCurrent)
                loop.advance(by: .seconds(1))
                #expect(!loop.isCurrent)
                #expect(seen.withLock { $0 } == ["submitted": true, "timer": true, "other loop": false])
            }
        }
    }

    @Test func checkNoPendingWorkNamesWhatIsLeft() throws {
        try withTestLoop { loop in
            try loop.checkNoPendingWork()
            loop.submit {}
            let handle = loop.schedule(after: .seconds(3)) {}
            let failure = #expect(throws: TestLoopFailure.self) { try loop.checkNoPendingWork() }
            let message = failure?.description ?? ""
            #expect(message.contains("1 ready item(s) and 1 timer(s)"))
            #expect(message.contains("3.0 seconds"))
            loop.run()
            handle.cancel()
        }
    }

    @Test func theLoopContextIsTheExecutorContext() throws {
        try withTestLoop { loop in
            #expect(PromiseContext.loop(loop) == .executor(loop))
            #expect(PromiseContext.loop(loop) != .loop(TestLoop()))
        }
    }

    // MARK: - Determinism

    /// Nested submissions, timers scheduled from timers and cancellations mid-flight, recorded
    /// with the virtual time at which each step ran.
    private static func scenario() throws -> [String] {
        try withTestLoop { loop in
            let log = Recorder<String>()
            @Sendable func record(_ label: String) { log.record("\(loop.nowInMilliseconds):\(label)") }
            let toCancel = Locked<[String: any PromiseScheduledWork]>([:])

            loop.submit {
                record("a")
                loop.submit {
                    record("a.1")
                    loop.submit { record("a.1.1") }
                }
                _ = loop.schedule(after: .milliseconds(5)) {
                    record("t5")
                    loop.submit { record("t5.submitted") }
                    _ = loop.schedule(after: .zero) { record("t5.zero") }
                    _ = loop.schedule(after: .milliseconds(5)) { record("t5+5") }
                    toCancel.withLock { $0["t12"] }?.cancel()
                }
                _ = loop.schedule(after: .milliseconds(10)) { record("t10") }
                let t12 = loop.schedule(after: .milliseconds(12)) { record("t12 (cancelled)") }
                toCancel.withLock { $0["t12"] = t12 }
            }
            loop.submit { record("b") }
            _ = loop.schedule(after: .milliseconds(5)) {
                record("t5-early")
                toCancel.withLock { $0["t7"] }?.cancel()
            }
            toCancel.withLock { $0["t7"] = loop.schedule(after: .milliseconds(7)) { record("t7 (cancelled)") } }
            _ = loop.schedule(after: .milliseconds(20)) {
                record("t20")
                _ = loop.schedule(after: .milliseconds(1)) { record("t21") }
            }

            loop.run()
            record("after run")
            loop.advance(by: .milliseconds(7))
            record("after advance 7")
            loop.advance(to: .milliseconds(15))
            record("after advance to 15")
            loop.runAll()
            record("after runAll")
            return log.values
        }
    }

    @Test func aScenarioRunsTheSameWayEveryTime() throws {
        let expected = [
            "0:a", "0:b", "0:a.1", "0:a.1.1", "0:after run",
            "5:t5-early", "5:t5", "5:t5.submitted", "5:t5.zero", "7:after advance 7",
            "10:t10", "10:t5+5", "15:after advance to 15",
            "20:t20", "21:t21", "21:after runAll",
        ]
        let first = try Self.scenario()
        #expect(first == expected)
        for _ in 1..<1_000 {
            let events = try Self.scenario()
            guard events == first else {
                Issue.record("a repetition differed: \(events)")
                return
            }
        }
    }

    // MARK: - Threads

    @Test func submissionsFromOtherThreadsWaitForTheTestToDriveTheLoop() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let threads = 4
            let perThread = 1_000
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread {
                    loop.submit { log.record("\(thread):\(index)") }
                    if index % 100 == 0 {
                        _ = loop.schedule(after: .seconds(1)) { log.record("timer \(thread):\(index)") }
                    }
                }
            }
            #expect(log.values.isEmpty)
            #expect(loop.readyCount == threads * perThread)
            loop.run()
            let events = log.values
            #expect(events.count == threads * perThread)
            for thread in 0..<threads {
                // Each thread's submissions keep their order.
                let own = events.filter { $0.hasPrefix("\(thread):") }
                #expect(own == (0..<perThread).map { "\(thread):\($0)" })
            }
            loop.advance(by: .seconds(1))
            #expect(log.values.count == threads * perThread + threads * perThread / 100)
            #expect(loop.pendingWorkCount == 0)
        }
    }

    @Test func timersCanBeCancelledFromAnotherThread() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let handles = (0..<100).map { index in
                loop.schedule(after: .seconds(1)) { log.record("\(index)") }
            }
            DispatchQueue.concurrentPerform(iterations: 4) { part in
                for index in stride(from: part, to: 100, by: 4) where index % 2 == 1 {
                    handles[index].cancel()
                }
            }
            #expect(loop.timerCount == 50)
            loop.advance(by: .seconds(1))
            #expect(log.values == stride(from: 0, to: 100, by: 2).map { "\($0)" })
        }
    }
}
