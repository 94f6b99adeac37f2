import Testing
import Tomorrowland
import TomorrowlandScheduling
import TomorrowlandSimulation
import TomorrowlandTestSupport

/// Runs the closure `work` holds.
private func run(_ work: LoopWork) {
    guard case .closure(let body) = work else {
        Issue.record("unexpected job")
        return
    }
    body()
}

/// Runs one round at `time`, as a loop that looked at its clock and read `time`.
private func runRound(_ core: SchedulingCore, at time: UInt64) {
    core.beginRound(at: time)
    while let work = core.nextInRound() { run(work) }
}

/// Drives the core as a virtual clock moving to `target` does (what `TestLoop` does): a round now,
/// then one at each timer deadline on the way, then the clock rests at `target`.
private func drain(_ core: SchedulingCore, until target: UInt64) {
    while let look = core.nextLook(notAfter: target) { runRound(core, at: look) }
    core.advanceIdle(to: target)
}

// The core is deliberately not Sendable (one owner thread). Each test drives it from its own
// thread only, and work that captures it runs inside `drain` on that thread, hence
// `nonisolated(unsafe)` on the locals.
@Suite("SchedulingCore")
struct SchedulingCoreTests {
    @Test func readyWorkRunsInFIFOOrder() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        for index in 0..<100 { core.enqueue(.closure { log.record("\(index)") }) }
        #expect(core.readyCount == 100)
        drain(core, until: 0)
        #expect(log.values == (0..<100).map { "\($0)" })
        #expect(core.isEmpty)
    }

    @Test func readyQueueKeepsOrderAcrossGrowthWhileWrapped() {
        // Interleave removals and appends so the ring wraps before it grows.
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        var expected: [String] = []
        var next = 0
        for _ in 0..<10 { core.enqueue(.closure { [next] in log.record("\(next)") }); next += 1 }
        core.beginRound(at: 0)
        for _ in 0..<5 {
            guard case .closure(let body) = core.nextInRound() else { Issue.record("empty"); return }
            body()
        }
        core.endRound()
        expected += (0..<5).map { "\($0)" }
        for _ in 0..<40 { core.enqueue(.closure { [next] in log.record("\(next)") }); next += 1 }
        drain(core, until: 0)
        expected += (5..<50).map { "\($0)" }
        #expect(log.values == expected)
    }

    @Test func timersRunInDeadlineOrderWhateverTheSchedulingOrder() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        var generator = SimulationRandom(seed: 42)
        let deadlines = (0..<500).map { _ in UInt64.random(in: 1...1_000, using: &generator) }
        for (index, deadline) in deadlines.enumerated() {
            _ = core.schedule(at: deadline, .closure { log.record("\(deadline)/\(index)") })
        }
        drain(core, until: 1_000)
        let expected = deadlines.enumerated()
            .sorted { ($0.element, $0.offset) < ($1.element, $1.offset) }
            .map { "\($0.element)/\($0.offset)" }
        #expect(log.values == expected)
    }

    @Test func timersWithEqualDeadlinesRunInSchedulingOrder() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        for index in 0..<64 { _ = core.schedule(at: 7, .closure { log.record("\(index)") }) }
        drain(core, until: 7)
        #expect(log.values == (0..<64).map { "\($0)" })
    }

    @Test func currentTimeIsTheRoundsTimeWhileItRuns() {
        nonisolated(unsafe) let core = SchedulingCore()
        let seen = Locked<[UInt64]>([])
        for deadline: UInt64 in [30, 10, 20] {
            _ = core.schedule(at: deadline, .closure { seen.withLock { $0.append(core.currentTime) } })
        }
        runRound(core, at: 100)
        #expect(seen.withLock { $0 } == [100, 100, 100])
        #expect(core.currentTime == 100)
        #expect(!core.isInRound)
    }

    @Test func aVirtualClockLooksAtEachDeadlineInTurnThenRestsAtTheTarget() {
        nonisolated(unsafe) let core = SchedulingCore()
        let seen = Locked<[UInt64]>([])
        for deadline: UInt64 in [30, 10, 20] {
            _ = core.schedule(at: deadline, .closure { seen.withLock { $0.append(core.currentTime) } })
        }
        drain(core, until: 100)
        #expect(seen.withLock { $0 } == [10, 20, 30])
        #expect(core.currentTime == 100)
    }

    @Test func timersDueWhenTheLoopLooksRunBeforeTheWorkTheirCallbacksSubmit() {
        // A loop that looks late (at 20) finds three timers due: they run first, in key order,
        // then what they queued, keyed at the round's time. Timers they schedule with deadlines
        // already past are raised to the round's time and join the ready work in FIFO order.
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        _ = core.schedule(
            at: 10,
            .closure {
                log.record("A@\(core.currentTime)")
                core.enqueue(.closure { log.record("ready-from-A") })
                _ = core.schedule(at: 10, .closure { log.record("timer10-from-A") })
                core.enqueue(.closure { log.record("ready2-from-A") })
            })
        _ = core.schedule(at: 10, .closure { log.record("B@\(core.currentTime)") })
        _ = core.schedule(at: 12, .closure { log.record("C@\(core.currentTime)") })
        runRound(core, at: 20)
        #expect(log.values == ["A@20", "B@20", "C@20", "ready-from-A", "timer10-from-A", "ready2-from-A"])
        #expect(core.isEmpty)
    }

    @Test func aDelayScheduledInARoundCountsFromTheRoundsTime() {
        nonisolated(unsafe) let core = SchedulingCore(currentTime: 1_000)
        core.beginRound(at: 2_000)
        #expect(core.deadline(after: 5) == 2_005)
        #expect(core.deadline(after: .max) == .max)
        core.endRound()
    }

    @Test func timersAfterTheTargetStayPending() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        _ = core.schedule(at: 10, .closure { log.record("10") })
        _ = core.schedule(at: 11, .closure { log.record("11") })
        drain(core, until: 10)
        #expect(log.values == ["10"])
        #expect(core.timerCount == 1)
        #expect(core.nextTimerDeadline == 11)
        #expect(core.currentTime == 10)
    }

    @Test func workQueuedDuringAStepRunsInTheSameRoundAfterWhatWasAlreadyDue() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        // Two timers due at 10. The first queues ready work and schedules a timer for 10 and one
        // for 15: all three are due by the target, and all come after timer B, which was already
        // due at 10.
        _ = core.schedule(
            at: 10,
            .closure {
                log.record("A@\(core.currentTime)")
                core.enqueue(.closure { log.record("ready-from-A@\(core.currentTime)") })
                _ = core.schedule(at: 10, .closure { log.record("timer10-from-A@\(core.currentTime)") })
                _ = core.schedule(at: 15, .closure { log.record("timer15-from-A@\(core.currentTime)") })
            })
        _ = core.schedule(at: 10, .closure { log.record("B@\(core.currentTime)") })
        _ = core.schedule(at: 12, .closure { log.record("C@\(core.currentTime)") })
        drain(core, until: 20)
        #expect(
            log.values == [
                "A@10", "B@10", "ready-from-A@10", "timer10-from-A@10", "C@12", "timer15-from-A@15",
            ])
        #expect(core.isEmpty)
        #expect(core.currentTime == 20)
    }

    @Test func readyWorkQueuedBeforeATimerCameDueRunsFirstAndLaterWorkAfter() {
        nonisolated(unsafe) let core = SchedulingCore(currentTime: 5)
        let log = Recorder<String>()
        _ = core.schedule(
            at: 8,
            .closure {
                log.record("timer")
                core.enqueue(.closure { log.record("queued-by-timer") })
            })
        core.enqueue(.closure { log.record("queued-at-5") })
        drain(core, until: 10)
        #expect(log.values == ["queued-at-5", "timer", "queued-by-timer"])
    }

    @Test func aDueTimerPrecedesReadyWorkQueuedAfterItAtTheSameInstant() {
        // Real-loop shape: the timer was scheduled for "now", then ready work was queued.
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        _ = core.schedule(at: 0, .closure { log.record("timer") })
        core.enqueue(.closure { log.record("ready") })
        drain(core, until: 0)
        #expect(log.values == ["timer", "ready"])
    }

    @Test func readyWorkKeepsOneOrderWhileTimersComeAndGoMidRound() {
        // The round switches between the case with no timer pending (the first ready entry,
        // no keys compared) and the merge by key, in both directions, with the ring wrapped.
        nonisolated(unsafe) let core = SchedulingCore(currentTime: 10)
        let log = Recorder<String>()
        nonisolated(unsafe) var timer: PromiseTimerID?
        for index in 0..<12 {
            core.enqueue(
                .closure {
                    log.record("r\(index)")
                    switch index {
                    case 2:
                        // Not due this round: the merge path must still hand out ready work.
                        timer = core.schedule(at: 50, .closure { log.record("later") })
                    case 5:
                        if let id = timer { core.cancel(id) }
                    case 7:
                        // Due now, after the ready work already queued, ahead of what follows.
                        _ = core.schedule(at: 0, .closure { log.record("zero-delay") })
                        core.enqueue(.closure { log.record("after-zero-delay") })
                    default:
                        break
                    }
                })
        }
        drain(core, until: 10)
        #expect(
            log.values == (0..<12).map { "r\($0)" } + ["zero-delay", "after-zero-delay"])
        #expect(core.isEmpty)
    }

    @Test func aTimerInThePastIsRaisedToNowAndRunsAfterWorkAlreadyDue() {
        nonisolated(unsafe) let core = SchedulingCore(currentTime: 100)
        let log = Recorder<String>()
        core.enqueue(.closure { log.record("ready") })
        _ = core.schedule(at: 3, .closure { log.record("late-timer@\(core.currentTime)") })
        #expect(core.nextTimerDeadline == 100)
        drain(core, until: 100)
        #expect(log.values == ["ready", "late-timer@100"])
    }

    @Test func timeNeverGoesBackwards() {
        nonisolated(unsafe) let core = SchedulingCore(currentTime: 50)
        core.beginRound(at: 10)
        #expect(core.nextInRound() == nil)
        #expect(core.currentTime == 50)
        let log = Recorder<String>()
        core.enqueue(.closure { log.record("ready") })
        drain(core, until: 0)
        #expect(log.values == ["ready"])
        #expect(core.currentTime == 50)
    }

    @Test func cancelledTimersNeverRunAndAreReleasedAtOnce() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        let spy = ReleaseSpy()
        var ids: [PromiseTimerID] = []
        for index in 0..<10 {
            let token = spy.token()
            ids.append(
                core.schedule(
                    at: UInt64(index),
                    .closure {
                        _ = token; log.record("\(index)")
                    }))
        }
        for index in stride(from: 1, to: 10, by: 2) { #expect(core.cancel(ids[index]) != nil) }
        #expect(spy.releasedCount == 5)
        #expect(core.timerCount == 5)
        drain(core, until: 100)
        #expect(log.values == ["0", "2", "4", "6", "8"])
        #expect(spy.releasedCount == 10)
    }

    @Test func cancellingTwiceOrAfterRunningDoesNothing() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        let ran = core.schedule(at: 1, .closure { log.record("ran") })
        let cancelled = core.schedule(at: 2, .closure { log.record("cancelled") })
        #expect(core.cancel(cancelled) != nil)
        #expect(core.cancel(cancelled) == nil)
        drain(core, until: 5)
        #expect(core.cancel(ran) == nil)
        #expect(log.values == ["ran"])
    }

    @Test func aStaleIdentifierDoesNotCancelTheTimerThatReusedItsSlot() {
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        let first = core.schedule(at: 1, .closure { log.record("first") })
        #expect(core.cancel(first) != nil)
        let second = core.schedule(at: 1, .closure { log.record("second") })
        #expect(second.slot == first.slot)  // the slot was reused...
        #expect(core.cancel(first) == nil)  // ...but the old identifier no longer matches
        drain(core, until: 1)
        #expect(log.values == ["second"])
    }

    @Test func timersCancelledRightAfterSchedulingLeaveTheKeptOnesInSchedulingOrder() {
        // A loop's request timeouts: one delay, each cancelled as its request finishes, most of
        // them right after scheduling (the run's last timer), a few kept. The cancelled ones are
        // released at once and never run; their slots are reused; the kept ones, all with one
        // deadline, run in scheduling order, also around a timer that went to the heap.
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        let spy = ReleaseSpy()
        core.beginRound(at: 100)
        var kept: [PromiseTimerID] = []
        for index in 0..<6 {
            // The token only in the closure: the cancel's release is its last.
            let moot = core.schedule(
                at: core.deadline(after: 30),
                .closure { [token = spy.token()] in
                    _ = token; log.record("moot \(index)")
                })
            #expect(core.cancel(moot) != nil)
            #expect(spy.releasedCount == index + 1)
            let next = core.schedule(at: core.deadline(after: 30), .closure { log.record("kept \(index)") })
            // The slot just freed is the one reused, with a new sequence number.
            #expect(next.slot == moot.slot)
            #expect(next.sequence > moot.sequence)
            #expect(core.cancel(moot) == nil)
            kept.append(next)
            if index == 2 {
                // Earlier than the run's last: the heap's; cancelled at once as well.
                let early = core.schedule(at: core.deadline(after: 10), .closure { log.record("early") })
                #expect(core.cancel(early) != nil)
            }
        }
        #expect(core.nextInRound() == nil)
        #expect(core.timerCount == kept.count)
        drain(core, until: 200)
        #expect(log.values == (0..<6).map { "kept \($0)" })
        #expect(spy.releasedCount == 6)
        #expect(core.timerCount == 0)
    }

    @Test func theCoreConvertsARepeatedDelayOnceAndEachDelayAsTheDurationDoes() {
        nonisolated(unsafe) let core = SchedulingCore()
        // Zero first (the remembered delay the core starts with), then runs of one delay, changes,
        // and the rounding and saturating edges.
        let delays: [Duration] = [
            .zero, .seconds(30), .seconds(30), .milliseconds(1), .seconds(30), .seconds(-1), .seconds(-1), .zero,
            Duration(secondsComponent: 0, attosecondsComponent: 1), .nanoseconds(1), .seconds(Int64.max),
            .seconds(Int64.max), .seconds(3_600) + .nanoseconds(5), .seconds(3_600),
        ]
        for delay in delays {
            #expect(core.nanoseconds(of: delay) == delay.schedulingNanoseconds, "\(delay)")
        }
    }

    @Test func durationsConvertAsA128BitDivisionRoundingUpWouldAcrossTheRange() {
        // The conversion divides in two 64-bit steps; the reference divides the 128-bit count.
        var generator = SimulationRandom(seed: 36)
        for trial in 0..<20_000 {
            // High halves below 10^9 (a 64-bit quotient) and, one trial in two, a little past it.
            let highLimit: UInt64 = trial.isMultiple(of: 2) ? 1_000_000_000 : 1_100_000_000
            let high = Int128(UInt64.random(in: 0..<highLimit, using: &generator))
            let attoseconds = high << 64 | Int128(UInt64.random(in: 0...UInt64.max, using: &generator))
            let duration = Duration(attoseconds: attoseconds)
            let (quotient, remainder) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
            let roundedUp = quotient + (remainder == 0 ? 0 : 1)
            let expected = roundedUp > Int128(UInt64.max) ? UInt64.max : UInt64(roundedUp)
            #expect(duration.schedulingNanoseconds == expected, "\(attoseconds)")
        }
    }

    @Test func aTimerCancellingItselfWhileRunningIsANoOp() {
        nonisolated(unsafe) let core = SchedulingCore()
        let result = Locked<Bool?>(nil)
        let id = Locked<PromiseTimerID?>(nil)
        id.withLock {
            $0 = core.schedule(
                at: 1,
                .closure {
                    let removed = core.cancel(id.withLock { $0! }) != nil; result.withLock { $0 = removed }
                })
        }
        drain(core, until: 1)
        #expect(result.withLock { $0 } == false)
    }

    @Test func randomSchedulesAndCancelsMatchAReferenceModel() {
        var generator = SimulationRandom(seed: 7)
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        // Reference: pending timers as (deadline, sequence, label).
        var model: [(deadline: UInt64, order: Int, label: Int)] = []
        var live: [(id: PromiseTimerID, label: Int)] = []
        var order = 0
        for label in 0..<5_000 {
            if !live.isEmpty && Int.random(in: 0..<3, using: &generator) == 0 {
                let victim = live.remove(at: Int.random(in: 0..<live.count, using: &generator))
                #expect(core.cancel(victim.id) != nil)
                model.removeAll { $0.label == victim.label }
            } else {
                // Few distinct deadlines, so ties are common.
                let deadline = UInt64.random(in: 0..<50, using: &generator)
                live.append((core.schedule(at: deadline, .closure { log.record("\(label)") }), label))
                model.append((deadline, order, label))
                order += 1
            }
        }
        #expect(core.timerCount == model.count)
        drain(core, until: 50)
        let expected = model.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }.map { "\($0.label)" }
        #expect(log.values == expected)
    }

    @Test func interleavedSchedulesCancelsAndPopsMatchAReferenceModel() {
        // Wide deadlines and cancels anywhere in the heap exercise both sift directions of a
        // removal; pops in between move the clock, so later timers may be raised to it.
        var generator = SimulationRandom(seed: 2_026)
        let core = SchedulingCore()
        var model: [(deadline: UInt64, order: Int, id: PromiseTimerID)] = []
        var order = 0
        var popped = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                let requested = core.currentTime + UInt64.random(in: 0..<1_000_000, using: &generator)
                let id = core.schedule(at: requested, .closure {})
                model.append((max(requested, core.currentTime), order, id))
                order += 1
            case 5..<8:
                guard !model.isEmpty else { continue }
                let victim = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                #expect(core.cancel(victim.id) != nil)
            default:
                let target = core.currentTime + UInt64.random(in: 0..<200_000, using: &generator)
                let due = model.filter { $0.deadline <= target }
                    .sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
                var handedOutAt: [UInt64] = []
                while let look = core.nextLook(notAfter: target) {
                    core.beginRound(at: look)
                    while core.nextInRound() != nil { handedOutAt.append(core.currentTime) }
                }
                core.advanceIdle(to: target)
                #expect(handedOutAt == due.map(\.deadline))
                for expected in due {
                    // A handed-out timer can no longer be cancelled.
                    #expect(core.cancel(expected.id) == nil)
                    popped += 1
                }
                model.removeAll { $0.deadline <= target }
            }
            #expect(core.timerCount == model.count)
            #expect(core.nextTimerDeadline == model.map(\.deadline).min())
        }
        #expect(popped > 1_000)
    }

    @Test func aHundredThousandTimersCancelledInSchedulingOrderLeaveNothingBehind() {
        nonisolated(unsafe) let core = SchedulingCore()
        let spy = ReleaseSpy()
        var ids: [PromiseTimerID] = []
        ids.reserveCapacity(100_000)
        for _ in 0..<100_000 {
            let token = spy.token()
            ids.append(core.schedule(at: 3_600_000_000_000, .closure { _ = token }))
        }
        #expect(core.timerCount == 100_000)
        for id in ids { #expect(core.cancel(id) != nil) }
        #expect(core.timerCount == 0)
        #expect(spy.releasedCount == 100_000)
        #expect(core.nextLook(notAfter: .max) == nil)
    }

    @Test func timersScheduledInKeyOrderAndOutOfItFireInOneMergedOrder() {
        // Nondecreasing deadlines join the sorted run in front of the heap, earlier ones go to the
        // heap; cancels hit the run's first, last and middle timers and the heap's.
        nonisolated(unsafe) let core = SchedulingCore()
        let log = Recorder<String>()
        var ids: [String: PromiseTimerID] = [:]
        for (label, deadline) in [
            ("a", 10), ("b", 10), ("c", 20), ("d", 5), ("e", 20), ("f", 15), ("g", 30), ("h", 1), ("i", 30),
            ("j", 25), ("k", 40),
        ] as [(String, UInt64)] {
            ids[label] = core.schedule(at: deadline, .closure { log.record(label) })
        }
        for label in ["a", "k", "e", "d"] { #expect(core.cancel(ids[label]!) != nil) }
        #expect(core.timerCount == 7)
        #expect(core.nextTimerDeadline == 1)
        // Scheduled after the cancels: the run's last timer is now "i" (30).
        _ = core.schedule(at: 30, .closure { log.record("l") })
        _ = core.schedule(at: 12, .closure { log.record("m") })
        drain(core, until: 40)
        #expect(log.values == ["h", "b", "m", "f", "c", "j", "g", "i", "l"])
        #expect(core.isEmpty)
    }

    @Test func timeoutShapedSchedulesCancelsAndPopsMatchAReferenceModel() {
        // What a server's timers look like: a few fixed delays counted from a moving clock (mostly
        // nondecreasing deadlines, with ties inside a round), cancelled mostly oldest first, some
        // anywhere, some firing; run and heap both hold timers and both hand out the minimum.
        var generator = SimulationRandom(seed: 18)
        let core = SchedulingCore()
        let log = Recorder<String>()
        let delays: [UInt64] = [1_000, 1_000, 1_000, 5_000, 300]
        var model: [(deadline: UInt64, order: Int, id: PromiseTimerID)] = []
        var order = 0
        var popped = 0
        for _ in 0..<30_000 {
            switch Int.random(in: 0..<20, using: &generator) {
            case 0..<10:
                let delay = delays[Int.random(in: 0..<delays.count, using: &generator)]
                let id = core.schedule(at: core.deadline(after: delay), .closure { [order] in log.record("\(order)") })
                model.append((core.currentTime + delay, order, id))
                order += 1
            case 10..<15:
                guard !model.isEmpty else { continue }
                #expect(core.cancel(model.removeFirst().id) != nil)
            case 15..<18:
                guard !model.isEmpty else { continue }
                let victim = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                #expect(core.cancel(victim.id) != nil)
            default:
                let target = core.currentTime + UInt64.random(in: 0..<400, using: &generator)
                let due = model.filter { $0.deadline <= target }
                    .sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
                var handedOut: [UInt64] = []
                let logged = log.values.count
                while let look = core.nextLook(notAfter: target) {
                    core.beginRound(at: look)
                    while let work = core.nextInRound() {
                        handedOut.append(core.currentTime)
                        run(work)
                    }
                }
                core.advanceIdle(to: target)
                #expect(handedOut == due.map(\.deadline))
                #expect(Array(log.values[logged...]) == due.map { "\($0.order)" })
                for expected in due { #expect(core.cancel(expected.id) == nil) }
                popped += due.count
                model.removeAll { $0.deadline <= target }
            }
            #expect(core.timerCount == model.count)
            #expect(core.nextTimerDeadline == model.map(\.deadline).min())
        }
        #expect(popped > 1_000)
        let remaining = model.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
        var handedOut = 0
        while let look = core.nextLook(notAfter: .max) {
            core.beginRound(at: look)
            while let work = core.nextInRound() {
                #expect(core.currentTime == remaining[handedOut].deadline)
                run(work)
                #expect(log.values.last == "\(remaining[handedOut].order)")
                handedOut += 1
            }
        }
        #expect(handedOut == remaining.count)
    }

    @Test func aBudgetedRoundStopsEarlyAndTheNextRoundKeepsTheSameOrder() {
        nonisolated(unsafe) let budgeted = SchedulingCore()
        nonisolated(unsafe) let unbudgeted = SchedulingCore()
        let budgetedLog = Recorder<String>()
        let unbudgetedLog = Recorder<String>()
        for (core, log) in [(budgeted, budgetedLog), (unbudgeted, unbudgetedLog)] {
            nonisolated(unsafe) let core = core
            for index in 0..<5 {
                _ = core.schedule(
                    at: UInt64(index),
                    .closure {
                        log.record("t\(index)")
                        core.enqueue(.closure { log.record("r\(index)") })
                    })
            }
        }
        // Rounds of at most three items, all at time 10, against one round.
        var rounds = 0
        cutting: while true {
            budgeted.beginRound(at: 10)
            for _ in 0..<3 {
                guard let work = budgeted.nextInRound() else { break cutting }
                run(work)
            }
            budgeted.endRound()
            rounds += 1
        }
        runRound(unbudgeted, at: 10)
        #expect(rounds == 3)
        #expect(budgetedLog.values == unbudgetedLog.values)
        #expect(budgetedLog.values.count == 10)
    }

    @Test func nextDeadlineIsNowWhileReadyWorkWaitsElseTheEarliestTimer() {
        nonisolated(unsafe) let core = SchedulingCore(currentTime: 4)
        #expect(core.nextDeadline == nil)
        _ = core.schedule(at: 9, .closure {})
        #expect(core.nextDeadline == 9)
        core.enqueue(.closure {})
        #expect(core.nextDeadline == 4)
        #expect(core.pendingCount == 2)
    }

    @Test func removingEverythingReleasesTheWork() {
        nonisolated(unsafe) let core = SchedulingCore()
        let spy = ReleaseSpy()
        for index in 0..<20 {
            let token = spy.token()
            _ = core.schedule(at: UInt64(index), .closure { _ = token })
            let other = spy.token()
            core.enqueue(.closure { _ = other })
        }
        var timers = core.removeAllTimers()
        #expect(timers.count == 20)
        #expect(spy.releasedCount == 0)  // handed back, not yet released
        timers.removeAll()
        #expect(spy.releasedCount == 20)
        #expect(core.removeAllReady().count == 20)
        #expect(spy.releasedCount == 40)
        #expect(core.isEmpty)
        // The heap is usable again afterwards.
        let log = Recorder<String>()
        _ = core.schedule(at: 2, .closure { log.record("b") })
        _ = core.schedule(at: 1, .closure { log.record("a") })
        drain(core, until: 2)
        #expect(log.values == ["a", "b"])
    }

    @Test func deinitializingTheCoreReleasesPendingWork() {
        let spy = ReleaseSpy()
        do {
            nonisolated(unsafe) let core = SchedulingCore()
            for _ in 0..<40 {
                let token = spy.token()
                _ = core.schedule(at: 1, .closure { _ = token })
                let other = spy.token()
                core.enqueue(.closure { _ = other })
            }
            // Wrap the ring so the deinitializer has two runs to release.
            core.beginRound(at: 0)
            for _ in 0..<30 { _ = core.nextInRound() }
            core.endRound()
            for _ in 0..<30 {
                let token = spy.token()
                core.enqueue(.closure { _ = token })
            }
            #expect(spy.releasedCount == 30)
        }
        #expect(spy.releasedCount == 110)
    }

    @Test func durationsConvertToWholeNanosecondsRoundingUpAndSaturating() {
        #expect(Duration.seconds(-1).schedulingNanoseconds == 0)
        #expect(Duration.zero.schedulingNanoseconds == 0)
        #expect(Duration.nanoseconds(-5).schedulingNanoseconds == 0)
        #expect(Duration.milliseconds(1500).schedulingNanoseconds == 1_500_000_000)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 1).schedulingNanoseconds == 1)
        #expect(
            Duration(secondsComponent: 2, attosecondsComponent: 1_000_000_001).schedulingNanoseconds == 2_000_000_002)
        #expect(Duration.seconds(Int64.max).schedulingNanoseconds == .max)
        #expect(Duration(schedulingNanoseconds: .max).schedulingNanoseconds == .max)
        #expect(Duration(schedulingNanoseconds: 3_000_000_007) == .seconds(3) + .nanoseconds(7))
    }

    @Test func durationsConvertExactlyAtTheEdgesOfTheNanosecondRange() {
        // UInt64.max nanoseconds is 18446744073.709551615 s: the largest exact value, then
        // saturation from the first attosecond past it.
        let largest = Duration(secondsComponent: 18_446_744_073, attosecondsComponent: 709_551_615_000_000_000)
        #expect(largest.schedulingNanoseconds == .max)
        #expect((largest - .nanoseconds(1)).schedulingNanoseconds == UInt64.max - 1)
        #expect(
            (largest - .nanoseconds(1) + Duration(secondsComponent: 0, attosecondsComponent: 1)).schedulingNanoseconds
                == .max)
        #expect((largest + Duration(secondsComponent: 0, attosecondsComponent: 1)).schedulingNanoseconds == .max)
        #expect((largest + .nanoseconds(1)).schedulingNanoseconds == .max)
        // Rounding up, and a delay of an hour (W5's) on the path every timer takes.
        #expect(Duration.seconds(Int64.min).schedulingNanoseconds == 0)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999).schedulingNanoseconds == 1)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 1_000_000_000).schedulingNanoseconds == 1)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 1_000_000_001).schedulingNanoseconds == 2)
        #expect(Duration.seconds(3_600).schedulingNanoseconds == 3_600_000_000_000)
        #expect((Duration.seconds(3_600) + .nanoseconds(5)).schedulingNanoseconds == 3_600_000_000_005)
        #expect(Duration.nanoseconds(Int64.max).schedulingNanoseconds == UInt64(Int64.max))
    }
}
