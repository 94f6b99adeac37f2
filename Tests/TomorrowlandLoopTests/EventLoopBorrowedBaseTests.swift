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

    /// How many hosts the release race runs on: each round is one chance for the release to meet
    /// the host inside its `event_base_loop`.
    private static let releaseRounds = 20

    @Test func releasingTheLoopWithoutShutdownOnAnotherThreadWhileTheHostRunsItsBaseIsSafe() {
        for _ in 0..<Self.releaseRounds {
            let host = HostBase()
            let stopper = HostStopper(host)
            var loop: EventLoop? = EventLoop(borrowing: host.base)
            let reference = WeakReference(loop!)
            let ranOnHost = Locked(false)
            let submissions = Locked(0)
            // Threads of their own, started here: a child task that starts one may wait long for
            // a cooperative thread when the whole suite runs.
            let hostStopped = DispatchSemaphore(value: 0)
            Thread {
                host.dispatch(seconds: 5)
                hostStopped.signal()
            }.start()
            // Use it: work from this thread runs on the host's.
            loop!.execute { ranOnHost.value = true }
            #expect(waitUntil { ranOnHost.value })
            // Wakes the host again and again, so that it is inside the loop's events when the
            // last reference goes (often on that thread).
            let trafficStopped = DispatchSemaphore(value: 0)
            Thread {
                while submissions.value < 1_000_000, let loop = reference.object {
                    loop.execute {}
                    submissions.withLock { $0 += 1 }
                }
                trafficStopped.signal()
            }.start()
            #expect(waitUntil { submissions.value > 100 })
            loop = nil
            #expect(waitUntil { reference.isReleased })
            stopper.requestStop()
            #expect(trafficStopped.wait(timeout: .now() + 20) == .success)
            #expect(hostStopped.wait(timeout: .now() + 20) == .success)
            // The host stopped on the request, once the loop's events were gone from its base.
            #expect(event_base_got_break(host.base) == 1)
            #expect(event_base_get_num_events(host.base, UInt32(EVENT_BASE_COUNT_ADDED)) == HostStopper.hostEventCount)
            stopper.free()
            host.free()
        }
    }
}

/// A host's own event that breaks its loop when asked, from any thread, once the base holds no
/// other event: an `eventfd` the asking thread writes to, watched on the host's thread.
private final class HostStopper: @unchecked Sendable {
    /// The events of the host itself: this one, and the time limit of ``HostBase/dispatch(seconds:)``
    /// (a timer, which libevent counts as an added event).
    static let hostEventCount: Int32 = 2

    // `@unchecked Sendable`: `event` is touched on the host's thread (its callback) or while the
    // host does not run the base; `descriptor` is written from any thread, as `eventfd` allows.
    let descriptor: Int32
    private var event: OpaquePointer?

    init(_ host: HostBase) {
        descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(descriptor >= 0, "eventfd failed")
        event = event_new(
            host.base, descriptor, Int16(EV_READ | EV_PERSIST),
            { _, _, context in
                let base = OpaquePointer(context!)
                // Left readable until the base holds the host's events only: the host keeps
                // calling back.
                if event_base_get_num_events(base, UInt32(EVENT_BASE_COUNT_ADDED)) == HostStopper.hostEventCount {
                    event_base_loopbreak(base)
                }
            }, UnsafeMutableRawPointer(host.base))
        event_add(event, nil)
    }

    func requestStop() {
        _ = eventfd_write(descriptor, 1)
    }

    /// After the host stopped.
    func free() {
        if let event { event_free(event) }
        event = nil
        close(descriptor)
    }
}
