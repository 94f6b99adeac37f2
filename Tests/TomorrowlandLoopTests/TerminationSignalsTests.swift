import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// `TerminationSignals`: the mask helper in process (on a thread of its own), the daemon's
/// sequence in `TerminationSignalsProbe` (signals are process-wide, and this suite must not
/// compete with EventLoopSignalTests for them), the other outcomes in exit tests.
@Suite("TerminationSignals")
struct TerminationSignalsTests {
    @Test func unblockReturnsTheSignalsThatWereBlockedAndUnblocksThem() {
        let outcome = Locked<(found: [Int32], stillBlocked: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            // Exactly SIGUSR2 blocked (a test thread starts with most signals blocked).
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR2)
            pthread_sigmask(SIG_SETMASK, &set, nil)
            let found = TerminationSignals.unblock([SIGWINCH, SIGUSR2])
            var now = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &now)
            outcome.value = (found, sigismember(&now, SIGUSR2) == 1)
            done.signal()
        }.start()
        done.wait()
        #expect(outcome.value?.found == [SIGUSR2])
        #expect(outcome.value?.stillBlocked == false)
    }

    @Test func aDaemonStartedWithTheSignalsBlockedHearsSigtermOnItsLoopAfterUnblocking() throws {
        let probe = try SignalsProbe(unblock: true)
        #expect(probe.waitForLine("ready"))
        #expect(probe.output.contains("blocked before: 15 2"))
        kill(probe.process.processIdentifier, SIGTERM)
        #expect(probe.waitForLine("first 15 on the loop"))
        #expect(probe.quit() == 0)
    }

    /// A second SIGTERM or a Ctrl-C during a graceful shutdown must not end the process with the
    /// signal's default action: the watchers stay after the first delivery.
    @Test func signalsAfterTheFirstDoNothing() throws {
        let probe = try SignalsProbe(unblock: true)
        #expect(probe.waitForLine("ready"))
        kill(probe.process.processIdentifier, SIGINT)
        #expect(probe.waitForLine("first 2 on the loop"))
        kill(probe.process.processIdentifier, SIGTERM)
        kill(probe.process.processIdentifier, SIGINT)
        // Real time is the point: the default action of either signal would end it at once.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(probe.process.isRunning)
        #expect(probe.quit() == 0)
        #expect(probe.output.components(separatedBy: "first").count == 2)
    }

    /// The control for the two tests above: with the mask a test runner hands its children, the
    /// signal stays pending and the loop never hears it.
    @Test func withoutUnblockingABlockedSignalNeverReachesTheLoop() throws {
        let probe = try SignalsProbe(unblock: false)
        #expect(probe.waitForLine("ready"))
        kill(probe.process.processIdentifier, SIGTERM)
        #expect(!probe.waitForLine("first", timeout: .seconds(1)))
        #expect(probe.quit() == 0)
    }

    @Test func anUnwatchableSignalRejectsAndLeavesNoWatcherBehind() async {
        // SIGTERM's watcher, registered first, must go: SIGTERM then has its default action.
        await #expect(processExitsWith: .signal(SIGTERM)) {
            let loop = EventLoop()
            let first = TerminationSignals.first(of: [SIGTERM, SIGKILL], on: loop)
            guard case .error(.invalidSignal(SIGKILL)) = loop.run(until: first) else { exit(1) }
            loop.runUntilIdle()
            raiseUnblocked(SIGTERM)
            exit(0)
        }
    }

    @Test func cancellingBeforeASignalCameRemovesTheWatchersAndCancels() async {
        await #expect(processExitsWith: .signal(SIGTERM)) {
            let loop = EventLoop()
            let first = TerminationSignals.first(on: loop)
            loop.runUntilIdle()
            first.requestCancel()
            loop.runUntilIdle()
            guard first.result == .cancelled else { exit(1) }
            raiseUnblocked(SIGTERM)
            exit(0)
        }
    }

    @Test("the watchers are in place when first(of:on:) returns, also on a loop another thread drives")
    func aSignalRightAfterTheCallReachesTheLoop() async {
        // Registered by queued loop work before, a signal raised right after the call usually
        // beat the registration and ended the process with its default action (loopkv, signalled
        // as soon as it logged "listening", died that way once in about 90 starts).
        await #expect(processExitsWith: .success) {
            // The test runner's mask is inherited: the loop thread (made below) and this one must
            // let the signal through.
            TerminationSignals.unblock([SIGUSR2])
            let loop = EventLoop()
            let thread = LoopThread(loop)
            precondition(thread.waitUntilRunning(), "the loop never ran")
            let first = TerminationSignals.first(of: [SIGUSR2], on: loop)
            raise(SIGUSR2)
            precondition(blockingResult(of: first)?.value == SIGUSR2, "the signal did not reach the loop")
            loop.shutdown()
            precondition(thread.join(), "the loop thread never ended")
        }
    }

    @Test func theLoopShuttingDownBeforeASignalCancelsThePromise() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            let first = TerminationSignals.first(on: loop)
            loop.runUntilIdle()
            loop.shutdown()
            guard first.result == .cancelled else { exit(1) }
            // Asked after shutdown: cancelled too, without a crash.
            guard TerminationSignals.first(on: loop).result == .cancelled else { exit(2) }
        }
    }
}

/// Raises `signal` with it unblocked on this thread, so that it is handled before `raise`
/// returns (test threads block signals).
private func raiseUnblocked(_ signal: Int32) {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, signal)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    raise(signal)
}

/// `TerminationSignalsProbe` started for one test, its output collected line by line.
private final class SignalsProbe: @unchecked Sendable {
    // `@unchecked Sendable`: `Process` and `Pipe` are not Sendable; the test drives them from its
    // own thread. `text` is written by the reader thread and read by the test.
    let process = Process()
    private let text = Locked("")
    private let input = Pipe()
    private let finished = DispatchSemaphore(value: 0)

    init(unblock: Bool) throws {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.executableURL = testBinary.deletingLastPathComponent().appendingPathComponent(
            "TerminationSignalsProbe")
        process.arguments = unblock ? ["unblock"] : []
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            finished.signal()
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var output: String { text.value }

    /// Waits (polling) until a line of the output contains `fragment`.
    func waitForLine(_ fragment: String, timeout: Duration = generousTimeout) -> Bool {
        waitUntil(timeout: timeout) { output.contains(fragment) }
    }

    /// Asks the probe to shut down; returns its exit status (nil if a signal ended it or it
    /// did not exit within 20 seconds).
    func quit() -> Int32? {
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        guard finished.wait(timeout: .now() + 20) == .success else { return nil }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}
