import Testing
import Tomorrowland
import TomorrowlandScheduling
import TomorrowlandTestSupport

/// What the loops of this suite were asked to do, kept apart from them so that a test can look
/// after a loop is gone.
private final class TimerLog: Sendable {
    /// The timers removed, in order.
    let removed = Recorder<PromiseTimerID>()
    /// The hops asked for, not run until the test runs them.
    let hops = Recorder<@Sendable () -> Void>()

    /// Runs every hop asked for so far, as the loop's thread would.
    func runHops() {
        for hop in hops.values { hop() }
    }
}

/// A loop whose timers the calling thread reaches, or not (then a cancel hops).
private final class RecordingLoop: Sendable {
    let log: TimerLog
    let reachable: Bool

    init(log: TimerLog = TimerLog(), reachable: Bool = true) {
        self.log = log
        self.reachable = reachable
    }
}

private enum RecordingAccess: LoopTimerAccess {
    static func reachesTimers(of loop: RecordingLoop) -> Bool {
        loop.reachable
    }

    static func removeTimer(_ id: PromiseTimerID, from loop: RecordingLoop) {
        loop.log.removed.record(id)
    }

    static func hop(to loop: RecordingLoop, _ body: @escaping @Sendable () -> Void) {
        loop.log.hops.record(body)
    }
}

@Suite("LoopTimerHandle and LoopTimerReference")
struct LoopTimerHandleTests {
    private let loop = RecordingLoop()
    private let id = PromiseTimerID(slot: 3, sequence: 42)

    private func handle(on loop: RecordingLoop? = nil) -> LoopTimerHandle<RecordingAccess> {
        let handle = LoopTimerHandle<RecordingAccess>(loop: loop ?? self.loop)
        handle.timerID = id
        return handle
    }

    // MARK: LoopTimerHandle

    @Test func cancelBeforeTheWorkBeginsKeepsItFromStartingAndRemovesTheTimerOnce() {
        let handle = handle()
        #expect(handle.isPending)
        handle.cancel()
        handle.cancel()
        #expect(!handle.isPending)
        #expect(!handle.begin())
        #expect(loop.log.removed.values == [id])
        #expect(loop.log.hops.count == 0, "the timers were reachable: no hop")
    }

    @Test func cancelFromAnotherThreadKeepsTheWorkFromStartingAtOnceAndRemovesTheTimerOnTheLoop() {
        let elsewhere = RecordingLoop(reachable: false)
        let handle = handle(on: elsewhere)
        handle.cancel()
        handle.cancel()
        #expect(!handle.begin(), "claimed before the hop runs")
        #expect(elsewhere.log.removed.values.isEmpty)
        #expect(elsewhere.log.hops.count == 1, "one hop, however many cancels")
        elsewhere.log.runHops()
        #expect(elsewhere.log.removed.values == [id])
    }

    @Test func cancelAfterTheWorkBeganRemovesNothing() {
        let handle = handle()
        #expect(handle.begin())
        #expect(!handle.isPending)
        handle.cancel()
        #expect(loop.log.removed.values.isEmpty)
        // The work claims the handle once.
        #expect(!handle.begin())
    }

    @Test func aHandleMarkedCancelledByARefusingLoopHasNothingToCancel() {
        let handle = LoopTimerHandle<RecordingAccess>(loop: loop)
        handle.markCancelled()
        #expect(!handle.isPending)
        #expect(!handle.begin())
        handle.cancel()
        #expect(loop.log.removed.values.isEmpty)
    }

    @Test func aTimerNeverInsertedIsNotRemoved() {
        let handle = LoopTimerHandle<RecordingAccess>(loop: loop)
        handle.cancel()
        #expect(handle.wasCancelledBeforeStarting)
        #expect(loop.log.removed.values.isEmpty)
    }

    @Test func theTimerIDIsTakenOnce() {
        let handle = handle()
        #expect(handle.takeTimerID() == id)
        #expect(handle.takeTimerID() == nil)
    }

    @Test func cancelAfterTheLoopIsGoneDoesNothing() {
        var gone: RecordingLoop? = RecordingLoop()
        let log = gone!.log
        let handle = LoopTimerHandle<RecordingAccess>(loop: gone!)
        weak let watched = gone
        gone = nil
        #expect(watched == nil)
        handle.cancel()
        #expect(!handle.isPending)
        #expect(log.removed.values.isEmpty)
    }

    // MARK: LoopTimerReference

    @Test func aReferenceRemovesItsTimerAtOnceWhereTheTimersAreReachable() {
        let reference = LoopTimerReference<RecordingAccess>(loop: loop, id: id)
        reference.cancel()
        #expect(loop.log.removed.values == [id])
        #expect(loop.log.hops.count == 0)
    }

    @Test func aReferenceHopsToRemoveItsTimerFromAnotherThread() {
        let elsewhere = RecordingLoop(reachable: false)
        LoopTimerReference<RecordingAccess>(loop: elsewhere, id: id).cancel()
        #expect(elsewhere.log.removed.values.isEmpty)
        elsewhere.log.runHops()
        #expect(elsewhere.log.removed.values == [id])
    }

    @Test func aReferencesHopDoesNotKeepTheLoopAliveAndRemovesNothingOnceItIsGone() {
        let log = TimerLog()
        var gone: RecordingLoop? = RecordingLoop(log: log, reachable: false)
        LoopTimerReference<RecordingAccess>(loop: gone!, id: id).cancel()
        weak let watched = gone
        gone = nil
        #expect(watched == nil, "the waiting hop holds the loop weakly")
        log.runHops()
        #expect(log.removed.values.isEmpty)
    }

    @Test("a reference fits an existential's inline buffer (three words): `any PromiseScheduledWork` allocates nothing")
    func aReferenceFitsAnExistentialsInlineBuffer() {
        typealias Reference = LoopTimerReference<RecordingAccess>
        let word = MemoryLayout<UnsafeRawPointer>.size
        #expect(MemoryLayout<Reference>.size <= 3 * word)
        #expect(MemoryLayout<Reference>.alignment <= MemoryLayout<UnsafeRawPointer>.alignment)
        #expect(_isPOD(PromiseTimerID.self), "the rest of the value is the loop's one reference")
    }
}
