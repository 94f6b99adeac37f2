import CLibevent
import Dispatch
import Foundation
import Synchronization
import Testing
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// A host-owned `event_base`, created and freed through libevent's C API as a host program would.
private final class HostBase: @unchecked Sendable {
    // `@unchecked Sendable`: `base` is immutable; libevent calls on it happen on the test's thread
    // or inside the loop's work, which the host runs on that same thread.
    let base: OpaquePointer

    init() {
        guard let base = event_base_new() else { fatalError("event_base_new failed") }
        self.base = base
    }

    /// Runs the base as a host would, until something breaks it or `seconds` pass.
    func dispatch(seconds: Int = 10) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        event_base_loopexit(base, &limit)
        event_base_dispatch(base)
    }

    func breakLoop() { event_base_loopbreak(base) }

    func free() { event_base_free(base) }
}

@Suite("EventLoop on a borrowed event_base")
struct EventLoopBorrowedBaseTests {
    @Test func workFromAnotherThreadRunsOnTheHostsThreadWhenTheHostRunsItsBase() {
        let host = HostBase()
        let loop = EventLoop(borrowing: host.base)
        let hostThread = pthread_self()
        let results = Recorder<Bool>()
        Thread {
            loop.execute {
                results.record(pthread_equal(pthread_self(), hostThread) != 0)
                results.record(loop.inEventLoop)
                host.breakLoop()
            }
        }.start()
        host.dispatch()
        #expect(results.values == [true, true])
        loop.shutdown()
        host.free()
    }

    @Test func timersAndTheirFollowUpWorkRunInsideTheHostsLoop() {
        let host = HostBase()
        let loop = EventLoop(borrowing: host.base)
        let log = Recorder<String>()
        _ = loop.schedule(after: .milliseconds(20)) { log.record("20 ms") }
        _ = loop.schedule(after: .milliseconds(10)) {
            log.record("10 ms")
            // Work queued by a timer runs in the same callback, before the host waits again.
            loop.execute { log.record("after 10 ms") }
        }
        _ = loop.schedule(after: .milliseconds(30)) {
            log.record("30 ms")
            host.breakLoop()
        }
        host.dispatch()
        // Timers run in deadline order, and the 10 ms timer's follow-up work ran inside the host's
        // loop before `dispatch()` returned. Where the follow-up falls among the later timers is
        // real time's to decide: a host that wakes late finds several timers due, and they run
        // before the work their callbacks queued (the loops' timer rule).
        let values = log.values
        #expect(values.filter { $0 != "after 10 ms" } == ["10 ms", "20 ms", "30 ms"])
        #expect(values.firstIndex(of: "after 10 ms").map { $0 > values.firstIndex(of: "10 ms")! } == true)
        loop.shutdown()
        host.free()
    }

    @Test func theHostsOwnEventsKeepWorking() {
        let host = HostBase()
        let loop = EventLoop(borrowing: host.base)
        let log = Recorder<String>()
        // A plain libevent timer of the host's, next to the loop's events.
        let hostTimer = event_new(
            host.base, -1, 0,
            { _, _, context in
                Unmanaged<HostBase>.fromOpaque(context!).takeUnretainedValue().breakLoop()
            }, Unmanaged.passUnretained(host).toOpaque())!
        var delay = timeval(tv_sec: 0, tv_usec: 30_000)
        event_add(hostTimer, &delay)
        loop.execute { log.record("loop work") }
        host.dispatch()
        #expect(log.values == ["loop work"])
        event_free(hostTimer)
        loop.shutdown()
        host.free()
    }

    @Test func shutdownRemovesTheLoopsEventsAndLeavesTheBaseToItsOwner() {
        let host = HostBase()
        let loop = EventLoop(borrowing: host.base)
        loop.execute {}
        loop.shutdown()
        #expect(loop.isShutdownComplete)
        // With the loop's events gone the base has nothing to wait for: libevent returns 1.
        #expect(event_base_loop(host.base, EVLOOP_NONBLOCK) == 1)
        host.free()
    }

    @Test func theLoopCanAlsoDriveABorrowedBase() {
        let host = HostBase()
        let loop = EventLoop(borrowing: host.base)
        let ran = Locked(false)
        loop.execute { ran.value = true }
        loop.runUntilIdle()
        #expect(ran.value)
        loop.shutdown()
        host.free()
    }

    @Test func watchersFireInsideTheHostsLoop() throws {
        let host = HostBase()
        let loop = EventLoop(borrowing: host.base)
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readEnd = descriptors[0]
        let log = Recorder<String>()
        try loop.watch(fileDescriptor: readEnd, for: .readable) { _ in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            log.record("read \(byte)")
            // Work the handler queues runs before the host waits again.
            loop.execute {
                log.record("follow-up")
                host.breakLoop()
            }
        }
        var byte: UInt8 = 5
        #expect(write(descriptors[1], &byte, 1) == 1)
        host.dispatch()
        #expect(log.values == ["read 5", "follow-up"])
        loop.shutdown()
        host.free()
        close(descriptors[0])
        close(descriptors[1])
    }
}
