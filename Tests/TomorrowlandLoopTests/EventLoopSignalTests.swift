import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

// Signal delivery is process-wide and one loop owns it at a time, so these tests run one after
// the other, and no other suite watches signals.
//
// Tests run on libdispatch worker threads, which block signals: a `raise()` there would stay
// pending. So the signal is unblocked on the calling thread for the length of the `raise()`,
// which then runs libevent's handler synchronously, on this thread, before it returns.
private func raiseHere(_ signal: Int32) {
    var unblock = sigset_t()
    sigemptyset(&unblock)
    sigaddset(&unblock, signal)
    var previous = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &unblock, &previous)
    raise(signal)
    pthread_sigmask(SIG_SETMASK, &previous, nil)
}

@Suite("EventLoop signals", .serialized)
struct EventLoopSignalTests {
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP, SIGUSR1])
    func aRaisedSignalCallsItsWatcherOnTheLoop(signal: Int32) throws {
        let loop = EventLoop()
        let received = Recorder<String>()
        let watcher = try loop.watch(signal: signal) { number in
            received.record("\(number) \(loop.inEventLoop)")
        }
        raiseHere(signal)
        loop.runUntilIdle()
        #expect(received.values == ["\(signal) true"])
        raiseHere(signal)
        loop.runUntilIdle()
        #expect(received.values.count == 2)
        watcher.cancel()
        loop.shutdown()
    }

    @Test func aSignalWakesABlockedLoop() throws {
        let loop = EventLoop()
        try loop.watch(signal: SIGHUP) { _ in loop.stop() }
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        raiseHere(SIGHUP)
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func theSignalPromiseIsFulfilledWithTheSignal() {
        let loop = EventLoop()
        let promise = loop.signal(SIGUSR2)
        loop.runUntilIdle()
        #expect(promise.result == nil)
        raiseHere(SIGUSR2)
        let result = loop.run(until: promise)
        #expect(result == .value(SIGUSR2))
        loop.shutdown()
    }

    @Test func aSecondLoopCannotWatchSignalsUntilTheOwnerShutsDown() throws {
        let owner = EventLoop()
        let other = EventLoop()
        try owner.watch(signal: SIGUSR1) { _ in }
        #expect(throws: EventLoopError.signalsOwnedByAnotherLoop) {
            try other.watch(signal: SIGUSR2) { _ in }
        }
        let rejected = other.signal(SIGUSR2)
        #expect(rejected.result == .error(.signalsOwnedByAnotherLoop))
        owner.shutdown()
        let watcher = try other.watch(signal: SIGUSR2) { _ in }
        watcher.cancel()
        other.shutdown()
    }

    @Test func signalsThatCannotBeWatchedAreThrownErrors() {
        let loop = EventLoop()
        #expect(throws: EventLoopError.invalidSignal(SIGKILL)) { try loop.watch(signal: SIGKILL) { _ in } }
        #expect(throws: EventLoopError.invalidSignal(0)) { try loop.watch(signal: 0) { _ in } }
        #expect(throws: EventLoopError.invalidSignal(99)) { try loop.watch(signal: 99) { _ in } }
        loop.shutdown()
    }

    @Test func shutdownRejectsAPendingSignalPromise() {
        let loop = EventLoop()
        let promise = loop.signal(SIGUSR1)
        loop.shutdown()
        #expect(promise.result == .error(.shutDown))
    }
}
