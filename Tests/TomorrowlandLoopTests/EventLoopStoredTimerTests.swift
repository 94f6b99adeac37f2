import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

/// `EventLoop.storeTimer(_:after:)`: on its own thread the loop keeps a promise timer as it is in
/// its timers (no closure, no handle), fires it in the loop's timer order, removes it at once on a
/// cancel from its thread and through a hop from another, and releases it unrun at shutdown.
@Suite("EventLoop stored promise timers")
struct EventLoopStoredTimerTests {
    @Test func onTheLoopThreadTheTimerIsStoredAndFiresInSchedulingOrderWithOtherTimers() {
        let loop = EventLoop()
        let log = Recorder<String>()
        let ids = Locked<[PromiseTimerID?]>([])
        loop.execute {
            _ = loop.schedule(after: .milliseconds(5)) { log.record("closure 1") }
            let first = loop.storeTimer(RecordingTimer("stored 1", log), after: .milliseconds(5))
            _ = loop.schedule(after: .milliseconds(5)) { log.record("closure 2") }
            let second = loop.storeTimer(RecordingTimer("stored 2", log), after: .milliseconds(5))
            _ = loop.schedule(after: .milliseconds(10)) { loop.stop() }
            ids.value = [first, second]
        }
        loop.run()
        #expect(ids.value.allSatisfy { $0 != nil })
        #expect(log.values == ["closure 1", "stored 1 fired", "closure 2", "stored 2 fired"])
        loop.shutdown()
        // Fired timers are not released again at shutdown.
        #expect(log.values.count == 4)
    }

    @Test func offTheLoopThreadTheLoopDeclinesAndStoresNothing() {
        let loop = EventLoop()
        let log = Recorder<String>()
        #expect(loop.storeTimer(RecordingTimer("stored", log), after: .zero) == nil)
        loop.runUntilIdle()
        loop.shutdown()
        #expect(log.values.isEmpty)
    }

    @Test func cancellingOnTheLoopRemovesTheTimerAndReleasesItAtOnce() {
        let loop = EventLoop()
        let log = Recorder<String>()
        let releasedAtCancel = Locked(false)
        loop.execute {
            let spy = DeinitFlag()
            let id = loop.storeTimer(RecordingTimer("stored", log, spy: spy), after: .zero)
            #expect(id != nil)
            if let id { loop.cancelStoredTimer(id) }
            releasedAtCancel.value = spy.isSet
            // A second cancel, and one with the stale identifier after the slot is reused, do nothing.
            _ = loop.storeTimer(RecordingTimer("next", log), after: .zero)
            if let id { loop.cancelStoredTimer(id) }
        }
        loop.runUntilIdle()
        loop.runUntilIdle()
        #expect(releasedAtCancel.value)
        #expect(log.values == ["next fired"])
        loop.shutdown()
    }

    @Test func timersCancelledAsSoonAsStoredNeverFireAndTheKeptOnesFireInStoringOrder() {
        // W8's shape: request deadlines of one delay stored in one round, most cancelled at once
        // (the request finished). Each cancelled timer is released at once, its slot goes to the
        // next; the kept ones share a deadline and fire in the order they were stored.
        let loop = EventLoop()
        let log = Recorder<String>()
        let releasedAtCancel = Locked<[Bool]>([])
        loop.execute {
            for index in 0..<4 {
                let spy = DeinitFlag()
                if let id = loop.storeTimer(RecordingTimer("moot \(index)", log, spy: spy), after: .milliseconds(5)) {
                    loop.cancelStoredTimer(id)
                }
                releasedAtCancel.value.append(spy.isSet)
                _ = loop.storeTimer(RecordingTimer("kept \(index)", log), after: .milliseconds(5))
            }
            _ = loop.schedule(after: .milliseconds(10)) { loop.stop() }
        }
        loop.run()
        #expect(releasedAtCancel.value == [true, true, true, true])
        #expect(log.values == ["kept 0 fired", "kept 1 fired", "kept 2 fired", "kept 3 fired"])
        loop.shutdown()
        #expect(log.values.count == 4)
    }

    @Test func cancellingFromAnotherThreadRemovesTheTimerOnTheLoopWithoutFiringIt() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let log = Recorder<String>()
        let spy = DeinitFlag()
        let stored = DispatchSemaphore(value: 0)
        let id = Locked<PromiseTimerID?>(nil)
        loop.execute {
            id.value = loop.storeTimer(RecordingTimer("stored", log, spy: spy), after: .milliseconds(200))
            stored.signal()
        }
        #expect(stored.wait(timeout: .now() + 10) == .success)
        if let stored = id.value { loop.cancelStoredTimer(stored) }
        // The hop to the loop releases it well before its deadline.
        let released = DispatchSemaphore(value: 0)
        loop.execute {
            #expect(spy.isSet)
            released.signal()
        }
        #expect(released.wait(timeout: .now() + 10) == .success)
        let done = DispatchSemaphore(value: 0)
        _ = loop.schedule(after: .milliseconds(300)) { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.values.isEmpty)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func shutdownReleasesAPendingStoredTimerUnrunOnce() {
        let loop = EventLoop()
        let log = Recorder<String>()
        loop.execute {
            _ = loop.storeTimer(RecordingTimer("stored", log), after: .seconds(60))
        }
        loop.runUntilIdle()
        #expect(log.values.isEmpty)
        loop.shutdown()
        #expect(log.values == ["stored released"])
    }

    @Test func aTimeoutArmedOnTheLoopEndsCancelledAtShutdownAndSendsOneCancelRequestUpstream() {
        let loop = EventLoop()
        let requests = Recorder<String>()
        let timeout = Locked<Promise<Int, PromiseTimeoutError<String>>?>(nil)
        // Only the timeout observes the upstream (the test keeps its resolver, not the promise),
        // so the timeout's one cancel request reaches it.
        let resolver = {
            let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
            resolver.onRequestCancel(on: .immediate) { _ in requests.record("cancel requested") }
            loop.execute { timeout.value = upstream.timeout(on: .loop(loop), delay: .seconds(3600)) }
            return resolver
        }()
        loop.runUntilIdle()
        #expect(timeout.value?.result == nil)
        loop.shutdown()
        #expect(timeout.value?.result == .cancelled)
        #expect(requests.values == ["cancel requested"])
        withExtendedLifetime(resolver) {}
    }

    @Test func aTimeoutArmedOnTheLoopWhoseUpstreamResolvesOnAnotherThreadDeliversTheValue() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let armed = DispatchSemaphore(value: 0)
        let timeout = Locked<Promise<Int, PromiseTimeoutError<String>>?>(nil)
        loop.execute {
            timeout.value = upstream.timeout(on: .loop(loop), delay: .seconds(3600))
            armed.signal()
        }
        #expect(armed.wait(timeout: .now() + 10) == .success)
        let delivered = DispatchSemaphore(value: 0)
        _ = timeout.value?.always(on: .immediate) { _ in delivered.signal() }
        resolver.fulfill(with: 5)
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        #expect(timeout.value?.result == .value(5))
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }
}

/// Sets a flag when it is deinitialized.
private final class DeinitFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// A stored timer that records its calls; sets `spy` when it is deinitialized.
private final class RecordingTimer: PromiseTimerJob {
    let name: String
    let log: Recorder<String>
    let spy: DeinitFlag?

    init(_ name: String, _ log: Recorder<String>, spy: DeinitFlag? = nil) {
        self.name = name
        self.log = log
        self.spy = spy
    }

    deinit { spy?.set() }

    func timerFired() {
        log.record("\(name) fired")
    }

    func timerReleased() {
        log.record("\(name) released")
    }
}
