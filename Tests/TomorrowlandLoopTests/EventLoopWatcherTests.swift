import Dispatch
import Foundation
import Synchronization
import Testing
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// A pipe whose ends close when the test is done with them.
private struct Pipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() {
        var descriptors: [Int32] = [0, 0]
        precondition(pipe(&descriptors) == 0)
        readEnd = descriptors[0]
        writeEnd = descriptors[1]
    }

    func write(_ byte: UInt8) {
        var byte = byte
        precondition(Glibc.write(writeEnd, &byte, 1) == 1)
    }

    func read() -> UInt8? {
        var byte: UInt8 = 0
        return Glibc.read(readEnd, &byte, 1) == 1 ? byte : nil
    }

    func close() {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }
}

@Suite("EventLoop descriptor watchers")
struct EventLoopWatcherTests {
    @Test func aReadableDescriptorCallsTheHandlerOnTheLoop() throws {
        let loop = EventLoop()
        let pipe = Pipe()
        let log = Recorder<String>()
        let watcher = try loop.watch(fileDescriptor: pipe.readEnd, for: .readable) { events in
            log.record("\(events == .readable) \(loop.inEventLoop) \(pipe.read().map(String.init) ?? "nil")")
        }
        loop.runUntilIdle()
        #expect(log.values.isEmpty)
        pipe.write(7)
        loop.runUntilIdle()
        #expect(log.values == ["true true 7"])
        pipe.write(8)
        loop.runUntilIdle()
        #expect(log.values == ["true true 7", "true true 8"])
        watcher.cancel()
        pipe.write(9)
        loop.runUntilIdle()
        #expect(log.values.count == 2)
        #expect(watcher.isCancelled)
        loop.shutdown()
        pipe.close()
    }

    @Test func aWritableDescriptorCallsTheHandler() throws {
        let loop = EventLoop()
        let pipe = Pipe()
        let events = Recorder<IOEvents>()
        let watcher = try loop.watch(fileDescriptor: pipe.writeEnd, for: .writable) { ready in
            events.record(ready)
        }
        loop.runUntilIdle()
        #expect(events.values.first == .writable)
        watcher.cancel()
        loop.shutdown()
        pipe.close()
    }

    @Test func aBlockedLoopWakesForADescriptor() throws {
        let loop = EventLoop()
        let pipe = Pipe()
        let received = Locked<UInt8?>(nil)
        try loop.watch(fileDescriptor: pipe.readEnd, for: .readable) { _ in
            received.value = pipe.read()
            loop.stop()
        }
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        pipe.write(42)
        #expect(thread.join())
        #expect(received.value == 42)
        loop.shutdown()
        pipe.close()
    }

    @Test func cancellingFromAnotherThreadStopsTheHandler() throws {
        let loop = EventLoop()
        let pipe = Pipe()
        let calls = Locked(0)
        let watcher = try loop.watch(fileDescriptor: pipe.readEnd, for: .readable) { _ in
            _ = pipe.read()
            calls.withLock { $0 += 1 }
        }
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        watcher.cancel()
        #expect(watcher.isCancelled)
        pipe.write(1)
        // A round trip through the loop: the byte was there before this work was queued.
        let done = DispatchSemaphore(value: 0)
        _ = loop.schedule(after: .milliseconds(20)) { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(calls.value == 0)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
        pipe.close()
    }

    @Test func aClosedDescriptorIsAThrownErrorNotACrash() {
        let loop = EventLoop()
        let closed = unopenedDescriptor()
        #expect(throws: EventLoopError.invalidDescriptor(fd: closed, errno: EBADF)) {
            try loop.watch(fileDescriptor: closed, for: .readable) { _ in }
        }
        #expect(throws: EventLoopError.invalidDescriptor(fd: -1, errno: EBADF)) {
            try loop.watch(fileDescriptor: -1, for: .readable) { _ in }
        }
        loop.shutdown()
    }

    @Test func aDescriptorEpollRefusesIsAThrownError() throws {
        // epoll cannot watch regular files (EPERM).
        let loop = EventLoop()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loop-watch-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        ).path
        let fd = open(path, O_CREAT | O_RDWR, 0o600)
        #expect(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        #expect(throws: EventLoopError.invalidDescriptor(fd: fd, errno: EPERM)) {
            try loop.watch(fileDescriptor: fd, for: .readable) { _ in }
        }
        loop.shutdown()
    }

    @Test func watchingAfterShutdownThrows() {
        let loop = EventLoop()
        let pipe = Pipe()
        loop.shutdown()
        #expect(throws: EventLoopError.shutDown) {
            try loop.watch(fileDescriptor: pipe.readEnd, for: .readable) { _ in }
        }
        pipe.close()
    }

    @Test func workThatKeepsResubmittingItselfDoesNotStarveDescriptors() throws {
        // The loop polls descriptors between rounds of at most 4096 items.
        let loop = EventLoop()
        let pipe = Pipe()
        let watcherFired = Locked(false)
        let iterations = LoopConfined(0)
        try loop.watch(fileDescriptor: pipe.readEnd, for: .readable) { _ in
            _ = pipe.read()
            watcherFired.value = true
        }
        pipe.write(1)
        @Sendable func spin() {
            iterations.value += 1
            if watcherFired.value || iterations.value >= 1_000_000 {
                loop.stop()
            } else {
                loop.execute(spin)
            }
        }
        loop.execute(spin)
        loop.run()
        #expect(watcherFired.value)
        #expect(iterations.value < 1_000_000)
        loop.shutdown()
        pipe.close()
    }
}
