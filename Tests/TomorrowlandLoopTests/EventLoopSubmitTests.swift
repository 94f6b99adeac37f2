import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

private struct SubmitFailure: Error, Equatable {}

@Suite("EventLoop.submit")
struct EventLoopSubmitTests {
    @Test func submitRunsTheClosureOnTheLoopThreadAndFulfilsWithItsResult() {
        let loop = EventLoop()
        let promise = loop.submit { loop.inEventLoop ? 42 : -1 }
        #expect(promise.result == nil)
        #expect(loop.run(until: promise) == .value(42))
        loop.shutdown()
    }

    @Test func aThrowingSubmitRejectsWithWhatTheClosureThrows() {
        let loop = EventLoop()
        let promise = loop.submit { () throws -> Int in throw SubmitFailure() }
        let result = loop.run(until: promise)
        guard case .error(let error) = result else {
            Issue.record("expected a rejection, got \(result)")
            return
        }
        #expect(error as? SubmitFailure == SubmitFailure())
        loop.shutdown()
    }

    @Test func aThrowingSubmitThatReturnsFulfils() {
        let loop = EventLoop()
        let promise = loop.submit { () throws -> String in "done" }
        #expect(loop.run(until: promise).value == "done")
        loop.shutdown()
    }

    @Test func submitFromTheLoopRunsAfterTheTaskInProgressNotInsideIt() {
        let loop = EventLoop()
        let order = Recorder<String>()
        let outer = loop.submit { () -> Promise<Int, NoError> in
            let inner = loop.submit {
                order.record("inner")
                return 2
            }
            order.record("outer end")
            return inner
        }
        let inner = loop.run(until: outer).value
        #expect(inner.map { loop.run(until: $0) } == .value(2))
        #expect(order.values == ["outer end", "inner"])
        loop.shutdown()
    }

    @Test func submissionsFromAnotherThreadRunInOrderOnTheLoopThread() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let promises = (0..<100).map { index in loop.submit { (index, loop.inEventLoop) } }
        let all = when(fulfilled: promises)
        let done = DispatchSemaphore(value: 0)
        all.always(on: .immediate) { _ in done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let values = all.result?.value ?? []
        #expect(values.map(\.0) == Array(0..<100))
        #expect(values.allSatisfy { $0.1 })
        loop.shutdown()
        #expect(thread.join())
    }

    @Test func workSubmittedBeforeShutdownRunsInShutdownsDrain() {
        let loop = EventLoop()
        let promise = loop.submit { 7 }
        loop.shutdown()
        #expect(promise.result == .value(7))
    }

    /// Before `submit`, the only way to run work on a loop after it shut down was `execute`, a
    /// precondition failure: a crash here is the failure, hence a child process.
    @Test func submitAfterShutdownCancelsThePromiseWithoutRunningOrKeepingTheClosure() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            loop.shutdown()
            let spy = ReleaseSpy()
            let ran = Locked(false)
            let promise = { [token = spy.token()] in
                loop.submit {
                    withExtendedLifetime(token) { ran.value = true }
                    return 1
                }
            }()
            let throwing = loop.submit { () throws -> Int in 1 }
            guard promise.result == .cancelled, throwing.result?.isCancelled == true, !ran.value,
                spy.releasedCount == 1
            else { exit(1) }
        }
    }

    @Test func submitFromAnotherThreadToAShutDownGroupLoopCancels() async {
        await #expect(processExitsWith: .success) {
            let group = EventLoopGroup(loopCount: 2)
            let loops = group.loops
            group.syncShutdownGracefully()
            let promises = loops.map { loop in loop.submit { 1 } }
            guard promises.allSatisfy({ $0.result == .cancelled }) else { exit(1) }
        }
    }

    @Test func submitsRacingAGroupShutdownEndFulfilledOrCancelledNeverPending() async {
        await #expect(processExitsWith: .success) {
            for _ in 0..<20 {
                let group = EventLoopGroup(loopCount: 2)
                let loops = group.loops
                let submitted = Locked<[Promise<Int, NoError>]>([])
                let start = DispatchSemaphore(value: 0)
                let finished = DispatchGroup()
                for loop in loops {
                    finished.enter()
                    Thread {
                        start.wait()
                        for index in 0..<200 {
                            let promise = loop.submit { index }
                            submitted.withLock { $0.append(promise) }
                        }
                        finished.leave()
                    }.start()
                }
                start.signal()
                start.signal()
                group.syncShutdownGracefully()
                finished.wait()
                let all = submitted.withLock { $0 }
                guard all.count == 400, all.allSatisfy({ $0.result != nil }) else {
                    exit(1)
                }
            }
        }
    }
}
