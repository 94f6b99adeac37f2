import Testing
import Tomorrowland
import TomorrowlandScheduling
import TomorrowlandTestSupport

/// A loop that records the timers its handles ask it to remove.
private final class RecordingLoop: Sendable {
    let removed = Recorder<PromiseTimerID?>()
}

private enum RecordingRemoval: LoopTimerRemoval {
    static func removeTimer(of handle: LoopTimerHandle<RecordingRemoval>, from loop: RecordingLoop) {
        let id = handle.takeTimerID()
        loop.removed.record(id)
    }
}

@Suite("LoopTimerHandle")
struct LoopTimerHandleTests {
    private let loop = RecordingLoop()
    private let id = PromiseTimerID(slot: 3, sequence: 42)

    private func handle() -> LoopTimerHandle<RecordingRemoval> {
        let handle = LoopTimerHandle<RecordingRemoval>(loop: loop)
        handle.timerID = id
        return handle
    }

    @Test func cancelBeforeTheWorkBeginsKeepsItFromStartingAndRemovesTheTimerOnce() {
        let handle = handle()
        #expect(handle.isPending)
        handle.cancel()
        handle.cancel()
        #expect(!handle.isPending)
        #expect(!handle.begin())
        #expect(loop.removed.values == [id])
    }

    @Test func cancelAfterTheWorkBeganRemovesNothing() {
        let handle = handle()
        #expect(handle.begin())
        #expect(!handle.isPending)
        handle.cancel()
        #expect(loop.removed.values.isEmpty)
        // The work claims the handle once.
        #expect(!handle.begin())
    }

    @Test func aHandleMarkedCancelledByARefusingLoopHasNothingToCancel() {
        let handle = LoopTimerHandle<RecordingRemoval>(loop: loop)
        handle.markCancelled()
        #expect(!handle.isPending)
        #expect(!handle.begin())
        handle.cancel()
        #expect(loop.removed.values.isEmpty)
    }

    @Test func theTimerIDIsTakenOnce() {
        let handle = handle()
        #expect(handle.takeTimerID() == id)
        #expect(handle.takeTimerID() == nil)
    }

    @Test func cancelAfterTheLoopIsGoneDoesNothing() {
        var gone: RecordingLoop? = RecordingLoop()
        let handle = LoopTimerHandle<RecordingRemoval>(loop: gone!)
        weak let watched = gone
        gone = nil
        #expect(watched == nil)
        handle.cancel()
        #expect(!handle.isPending)
    }
}
