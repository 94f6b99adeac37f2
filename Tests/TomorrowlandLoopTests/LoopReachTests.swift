import CLibevent
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// Where and when the loop's internal ways of reaching it run their work, pinned through the
/// calls that use them:
///
/// - on the loop's thread, the calls that may run inline do (a write, a watcher's cancel, a
///   listener's close), and those that must never run inside the caller's call queue instead
///   (buffered input for a new reader, `submit`'s body);
/// - from a thread that does not drive an idle loop owning its base, the calls that may run
///   inline visit the loop and are done when they return, while the queue-only ones (cancelling
///   a stored timer or a scheduled handle) wait for the loop's next run;
/// - on a borrowed base the calls that may run inline never visit (the host may be inside
///   `event_base_loop`), while the set-up calls that wait for their result do.
///
/// A refactor of these paths must keep every answer here, and a simulated run's order with them
/// (the golden digests).
@Suite("EventLoop: inline or queued, per way of reaching the loop")
struct LoopReachTests {
    @Test func onTheLoopsThreadAWriteAWatchersCancelAndAListenersCloseRunInsideTheCall() throws {
        let loop = EventLoop()
        let (connection, peer) = socketPairConnection(on: loop)
        let (readEnd, writeEnd) = makePipe()
        let watcher = try loop.watch(fileDescriptor: readEnd, for: .readable) { _ in }
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        let seen = Recorder<String>()
        loop.execute {
            _ = connection.write([1, 2, 3])
            seen.record("bytes sent: \(readAvailable(from: peer).bytes.count)")
            watcher.cancel()
            seen.record("watcher removed: \(loop.watchers[ObjectIdentifier(watcher)] == nil)")
            listener.close()
            seen.record("listener unregistered: \(loop.resources[ObjectIdentifier(listener)] == nil)")
        }
        loop.runUntilIdle()
        #expect(seen.values == ["bytes sent: 3", "watcher removed: true", "listener unregistered: true"])
        connection.close()
        loop.shutdown()
        closeAll(peer, readEnd, writeEnd)
    }

    @Test func onTheLoopsThreadBufferedInputForANewReaderAndSubmitsBodyRunOnALaterTurn() {
        let loop = EventLoop()
        let (connection, peer) = socketPairConnection(on: loop)
        #expect(write(peer, "abcde", 5) == 5)
        // A promise read takes one byte and leaves the rest buffered.
        let first = connection.read(exactly: 1)
        loop.runUntilIdle()
        #expect(first.result?.value == Array("a".utf8))
        let seen = Recorder<String>()
        loop.execute {
            connection.startReading { bytes in
                seen.record("handler: \(bytes.count) bytes")
                return bytes.count
            }
            // A body with a result: `submit<Value>`, not the executor's `submit(_:)`.
            _ = loop.submit { () -> Int in
                seen.record("submitted body")
                return 1
            }
            seen.record("call returned")
        }
        loop.runUntilIdle()
        #expect(seen.values == ["call returned", "handler: 4 bytes", "submitted body"])
        connection.close()
        loop.shutdown()
        closeAll(peer)
    }

    @Test func fromAnotherThreadAnIdleOwnedLoopIsVisitedByTheCallsThatMayRunInline() throws {
        // The test's thread does not drive the loop, and no thread does.
        let loop = EventLoop()
        let (connection, peer) = socketPairConnection(on: loop)
        let (readEnd, writeEnd) = makePipe()
        let watcher = try loop.watch(fileDescriptor: readEnd, for: .readable) { _ in }
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        #expect(!loop.inEventLoop)
        _ = connection.write([1, 2, 3])
        #expect(readAvailable(from: peer).bytes.count == 3)
        watcher.cancel()
        #expect(loop.watchers[ObjectIdentifier(watcher)] == nil)
        listener.close()
        #expect(loop.resources[ObjectIdentifier(listener)] == nil)
        connection.close()
        loop.shutdown()
        closeAll(peer, readEnd, writeEnd)
    }

    @Test func fromAnotherThreadCancellingAStoredTimerOrAScheduledHandleWaitsForTheLoopsNextRun() throws {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let storedID = Locked<PromiseTimerID?>(nil)
        loop.execute { storedID.value = loop.storeTimer(ReleasedTimer(spy.token()), after: .seconds(3600)) }
        let handle = loop.schedule(after: .seconds(3600)) { [token = spy.token()] in withExtendedLifetime(token) {} }
        loop.runUntilIdle()
        let id = try #require(storedID.value)
        #expect(!loop.inEventLoop)
        loop.cancelStoredTimer(id)
        handle.cancel()
        // Neither visited the idle loop: both timers are still held.
        #expect(spy.releasedCount == 0)
        loop.runUntilIdle()
        #expect(spy.releasedCount == 2)
        loop.shutdown()
    }

    @Test func onABorrowedBaseTheCallsThatMayRunInlineHopAndTheSetUpCallsVisit() throws {
        guard let base = event_base_new() else {
            Issue.record("event_base_new failed")
            return
        }
        let loop = EventLoop(borrowing: base)
        // A set-up call waits for its result: with no thread driving the loop, it visits.
        let (connection, peer) = socketPairConnection(on: loop)
        let (readEnd, writeEnd) = makePipe()
        let watcher = try loop.watch(fileDescriptor: readEnd, for: .readable) { _ in }
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        #expect(loop.watchers[ObjectIdentifier(watcher)] != nil)
        #expect(loop.resources[ObjectIdentifier(listener)] != nil)
        // The host may be inside `event_base_loop` on another thread: these only hop.
        _ = connection.write([1, 2, 3])
        watcher.cancel()
        listener.close()
        #expect(readAvailable(from: peer).bytes.isEmpty)
        #expect(loop.watchers[ObjectIdentifier(watcher)] != nil)
        #expect(loop.resources[ObjectIdentifier(listener)] != nil)
        // The host runs its base once: the loop's wake-up event runs the hopped work.
        event_base_loop(base, EVLOOP_NONBLOCK)
        #expect(readAvailable(from: peer).bytes.count == 3)
        #expect(loop.watchers[ObjectIdentifier(watcher)] == nil)
        #expect(loop.resources[ObjectIdentifier(listener)] == nil)
        connection.close()
        loop.shutdown()
        event_base_free(base)
        closeAll(peer, readEnd, writeEnd)
    }
}

/// A stored promise timer that only holds `token`, so that its release shows.
private final class ReleasedTimer: PromiseTimerJob {
    let token: ReleaseSpy.Token

    init(_ token: ReleaseSpy.Token) {
        self.token = token
    }

    func timerFired() {}
    func timerReleased() {}
}

/// A pipe: its read end and its write end.
private func makePipe() -> (readEnd: Int32, writeEnd: Int32) {
    var descriptors: [Int32] = [0, 0]
    precondition(pipe(&descriptors) == 0, "pipe failed: errno \(errno)")
    return (descriptors[0], descriptors[1])
}

private func closeAll(_ descriptors: Int32...) {
    for descriptor in descriptors { close(descriptor) }
}
