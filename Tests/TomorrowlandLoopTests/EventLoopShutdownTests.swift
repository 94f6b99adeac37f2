import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoop shutdown")
struct EventLoopShutdownTests {
    @Test func pendingWorkRunsAtShutdownIncludingWorkItSubmits() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            log.record("queued before")
            loop.execute { log.record("submitted during the drain") }
        }
        loop.shutdown()
        #expect(log.values == ["queued before", "submitted during the drain"])
        #expect(loop.isShutdownComplete)
    }

    @Test func pendingTimersAreReleasedWithoutRunning() {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let ran = Locked(false)
        let handle = loop.schedule(after: .seconds(3600)) { [token = spy.token()] in
            withExtendedLifetime(token) { ran.value = true }
        }
        loop.execute {
            // A timer scheduled by work that runs during the drain is dropped too.
            _ = loop.schedule(after: .zero) { [token = spy.token()] in
                withExtendedLifetime(token) { ran.value = true }
            }
        }
        loop.shutdown()
        #expect(!ran.value)
        #expect(spy.releasedCount == 2)
        handle.cancel()  // does nothing, and does not crash
    }

    @Test func liveWatchersAreRemovedAndTheirHandlersReleased() throws {
        let loop = EventLoop()
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let spy = ReleaseSpy()
        let token = spy.token()
        let watcher = try loop.watch(fileDescriptor: descriptors[0], for: .readable) { _ in
            withExtendedLifetime(token) {}
        }
        _ = consume token
        loop.shutdown()
        #expect(watcher.isCancelled)
        #expect(spy.releasedCount == 1)
        #expect(loop.watchers.isEmpty)
        watcher.cancel()  // does nothing after shutdown
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test func shutdownFromInsideTheLoopsWorkEndsRun() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            log.record("shutting down")
            loop.shutdown()
            #expect(!loop.isShutdownComplete)  // happens once this task returns
        }
        loop.execute { log.record("still drained") }
        loop.run()
        #expect(log.values == ["shutting down", "still drained"])
        #expect(loop.isShutdownComplete)
    }

    @Test func shutdownFromAnotherThreadWhileRunningEndsRun() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let ran = Locked(false)
        loop.execute { ran.value = true }
        loop.shutdown()
        #expect(thread.join())
        #expect(ran.value)
        #expect(loop.isShutdownComplete)
    }

    @Test func shutdownTwiceDoesNothingTheSecondTime() {
        let loop = EventLoop()
        loop.shutdown()
        loop.shutdown()
        #expect(loop.isShutdownComplete)
    }

    @Test func aLoopReleasedWithoutShutdownFreesItsWorkWithoutRunningIt() {
        let spy = ReleaseSpy()
        let ran = Locked(false)
        do {
            let loop = EventLoop()
            loop.execute { [token = spy.token()] in
                withExtendedLifetime(token) { ran.value = true }
            }
            _ = loop.schedule(after: .seconds(3600)) { [token = spy.token()] in
                withExtendedLifetime(token) { ran.value = true }
            }
        }
        #expect(spy.releasedCount == 2)
        #expect(!ran.value)
    }

    @Test func aShutDownLoopReleasesItself() {
        weak var weakLoop: EventLoop?
        do {
            let loop = EventLoop()
            weakLoop = loop
            loop.execute { _ = loop.inEventLoop }  // work that captures the loop
            _ = loop.schedule(after: .seconds(3600)) { _ = loop.inEventLoop }
            loop.shutdown()
        }
        #expect(weakLoop == nil)
    }

    // MARK: Misuse

    @Test func runOnASecondThreadWhileRunningIsAPreconditionFailure() async {
        let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = EventLoop()
            let running = DispatchSemaphore(value: 0)
            loop.execute { running.signal() }
            Thread { loop.run() }.start()
            running.wait()
            loop.run()
        }
        let message = String(decoding: exit?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("called on a second thread while another thread drives the loop"))
    }

    @Test func runFromInsideTheLoopsOwnWorkIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let loop = EventLoop()
            loop.execute { loop.runUntilIdle() }
            loop.run()
        }
    }
}
