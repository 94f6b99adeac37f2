import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// Work that reaches a loop after its shutdown: a race every daemon has (a Dispatch worker
/// finishing while SIGTERM is handled), so each outcome is defined and none crashes.
///
/// Each scenario runs in a child process (an exit test): before these outcomes were defined, every
/// one of them killed the process with a precondition failure, and a crash must fail the test, not
/// the test runner. Inside the child, a wrong outcome is a `precondition` failure.
@Suite("EventLoop: work after shutdown")
struct EventLoopLateWorkTests {
    @Test("a map on a shut-down loop resolved from another thread ends cancelled and releases its closure unrun")
    func mapOnAShutDownLoopEndsCancelled() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            loop.shutdown()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let spy = ReleaseSpy()
            let ran = Locked(false)
            let mapped = promise.map(on: .loop(loop)) { [token = spy.token()] value -> Int in
                withExtendedLifetime(token) { ran.value = true }
                return value + 1
            }
            DispatchQueue.global().async { resolver.fulfill(with: 1) }
            let result = blockingResult(of: mapped)
            precondition(result.map(isCancelled) == true, "expected .cancelled, got \(String(describing: result))")
            precondition(!ran.value, "the callback ran on a shut-down loop")
            precondition(spy.releasedCount == 1, "the callback's captures were not released")
        }
    }

    @Test("tap, always and catch observers aimed at a shut-down loop are released without running")
    func observersOnAShutDownLoopAreReleasedUnrun() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            let (promise, resolver) = Promise<Int, String>.makeWithResolver()
            let spy = ReleaseSpy()
            let ran = Locked(0)
            promise.tap(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
            let always = promise.always(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
            let caught = promise.catch(on: .loop(loop)) { [token = spy.token()] _ in
                withExtendedLifetime(token) { ran.withLock { $0 += 1 } }
            }
            loop.shutdown()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                resolver.reject(with: "late")
                done.signal()
            }
            done.wait()
            precondition(blockingResult(of: always).map(isCancelled) == true, "always's promise is not cancelled")
            precondition(blockingResult(of: caught).map(isCancelled) == true, "catch's promise is not cancelled")
            precondition(ran.value == 0, "an observer ran on a shut-down loop")
            precondition(spy.releasedCount == 3, "released \(spy.releasedCount) of 3 observers")
        }
    }

    @Test("cancelling and dropping resolvers on other threads after shutdown is safe")
    func cancellingAndDroppingResolversAfterShutdown() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            var mapped: [Promise<Int, Never>] = []
            var resolvers: [Promise<Int, Never>.Resolver] = []
            for _ in 0..<100 {
                let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                mapped.append(promise.map(on: .loop(loop)) { $0 })
                resolvers.append(resolver)
            }
            loop.shutdown()
            let group = DispatchGroup()
            for (index, resolver) in resolvers.enumerated() {
                DispatchQueue.global().async(group: group) {
                    switch index % 3 {
                    case 0: resolver.fulfill(with: index)
                    case 1: resolver.cancel()
                    default: _ = resolver  // dropped: the promise is cancelled
                    }
                }
            }
            resolvers.removeAll()
            group.wait()
            for promise in mapped {
                precondition(
                    blockingResult(of: promise).map(isCancelled) == true, "a derived promise did not end cancelled")
            }
        }
    }

    @Test("200,000-link map and always chains on a shut-down loop end cancelled without deep recursion")
    func longChainsOnAShutDownLoop() async {
        // A cancelled `map` passes the cancellation on inline, without a job for the loop; an
        // `always` runs on cancellation too, so each link is a job the shut-down loop abandons,
        // and abandoning one cancels the next: recursion unless abandoning is a loop.
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            loop.shutdown()
            let (head, resolver) = Promise<Int, Never>.makeWithResolver()
            var mapped = head
            var always = head
            for _ in 0..<200_000 {
                mapped = mapped.map(on: .loop(loop)) { $0 &+ 1 }
                always = always.always(on: .loop(loop)) { _ in }
            }
            resolver.fulfill(with: 0)
            precondition(
                blockingResult(of: mapped).map(isCancelled) == true, "the map chain's tail did not end cancelled")
            precondition(
                blockingResult(of: always).map(isCancelled) == true, "the always chain's tail did not end cancelled")
        }
    }

    @Test("execute after shutdown returns false, releases the closure, and logs one line per loop")
    func executeAfterShutdownReturnsFalse() async {
        let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = EventLoop()
            loop.shutdown()
            let spy = ReleaseSpy()
            let ran = Locked(false)
            let first = loop.execute { [token = spy.token()] in withExtendedLifetime(token) { ran.value = true } }
            let second = DispatchQueue.global().sync {
                loop.execute { [token = spy.token()] in withExtendedLifetime(token) { ran.value = true } }
            }
            precondition(!first && !second, "execute accepted work after shutdown")
            precondition(!ran.value, "late work ran")
            precondition(spy.releasedCount == 2, "late work was not released")
        }
        let message = String(decoding: exit?.standardErrorContent ?? [], as: UTF8.self)
        let lines = message.split(separator: "\n").filter { $0.contains("after its shutdown") }
        #expect(lines.count == 1, "one diagnostic line per loop: \(message)")
    }

    @Test("schedule(after:) after shutdown returns a cancelled handle and releases the work at once")
    func scheduleAfterShutdownReturnsACancelledHandle() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            loop.shutdown()
            let spy = ReleaseSpy()
            let onLoop = loop.schedule(after: .zero) { [token = spy.token()] in withExtendedLifetime(token) {} }
            let offLoop = DispatchQueue.global().sync {
                loop.schedule(after: .seconds(1)) { [token = spy.token()] in withExtendedLifetime(token) {} }
            }
            precondition(spy.releasedCount == 2, "the work of a refused timer was kept")
            onLoop.cancel()
            offLoop.cancel()
        }
    }

    @Test(
        "shutdown cancels a pending timeout, delay, after-initialiser and sleep on the loop; their loop callbacks still run"
    )
    func shutdownSettlesWhatWaitsOnTheLoopsTimers() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            let (upstream, upstreamResolver) = Promise<Int, Never>.makeWithResolver()
            let timedOut = upstream.timeout(on: .loop(loop), delay: .seconds(3600))
            let delayed = Promise<Int, Never>(fulfilled: 1).delay(on: .loop(loop), .seconds(3600))
            let later = Promise<Int, Never>(on: .loop(loop), fulfilled: 1, after: .seconds(3600))
            let sleeping = loop.sleep(for: .seconds(3600))
            let seenOnLoop = Recorder<String>()
            timedOut.tap(on: .loop(loop)) { seenOnLoop.record("timeout \($0.isCancelled)") }
            loop.runUntilIdle()  // arms the timers (the delay's once its upstream's callback ran)
            loop.shutdown()
            precondition(timedOut.result.map(isCancelled) == true, "timeout: \(String(describing: timedOut.result))")
            precondition(delayed.result.map(isCancelled) == true, "delay: \(String(describing: delayed.result))")
            precondition(later.result.map(isCancelled) == true, "after: \(String(describing: later.result))")
            precondition(sleeping.result.map(isCancelled) == true, "sleep: \(String(describing: sleeping.result))")
            precondition(
                seenOnLoop.values == ["timeout true"], "loop callbacks of the cancelled timeout: \(seenOnLoop.values)")
            // The timeout's upstream resolving later, on another thread, changes nothing.
            DispatchQueue.global().sync { upstreamResolver.fulfill(with: 2) }
            precondition(timedOut.result.map(isCancelled) == true, "the late upstream changed the timeout's result")
        }
    }

    @Test(
        "a timeout or delay armed on a loop after its shutdown ends cancelled; dropping its upstream's resolver is safe"
    )
    func timersArmedAfterShutdownEndCancelled() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            loop.shutdown()
            var pending: (Promise<Int, Never>, Promise<Int, Never>.Resolver)? = Promise<Int, Never>.makeWithResolver()
            let timedOut = pending!.0.timeout(on: .loop(loop), delay: .seconds(1))
            let zeroTimeout = pending!.0.timeout(on: .loop(loop), delay: .zero)
            let later = Promise<Int, Never>(on: .loop(loop), fulfilled: 1, after: .milliseconds(1))
            precondition(
                blockingResult(of: timedOut).map(isCancelled) == true, "timeout: \(String(describing: timedOut.result))"
            )
            precondition(blockingResult(of: zeroTimeout).map(isCancelled) == true, "zero timeout")
            precondition(
                blockingResult(of: later).map(isCancelled) == true, "after: \(String(describing: later.result))")
            // The upstream's last resolver goes away on another thread: the upstream is cancelled.
            let resolver = Locked<Promise<Int, Never>.Resolver?>(pending!.1)
            pending = nil
            DispatchQueue.global().sync { resolver.value = nil }
        }
    }

    @Test("a group shut down with syncShutdownGracefully: a late resolve aimed at its loops ends cancelled")
    func lateResolveAfterAGroupShutdown() async {
        await #expect(processExitsWith: .success) {
            let group = EventLoopGroup(loopCount: 2)
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let mapped = group.loops.map { loop in promise.map(on: .loop(loop)) { $0 } }
            group.syncShutdownGracefully()
            DispatchQueue.global().sync { resolver.fulfill(with: 1) }
            for promise in mapped {
                precondition(
                    blockingResult(of: promise).map(isCancelled) == true, "a late callback did not end cancelled")
            }
        }
    }

    @Test("a Swift Concurrency job submitted after shutdown is dropped with one diagnostic line")
    func concurrencyJobAfterShutdownIsDroppedAndReported() async {
        let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = EventLoop()
            loop.shutdown()
            let started = Locked(false)
            _ = Task(executorPreference: loop) { started.value = true }
            // The job is refused on the submitting thread, inside `Task.init`.
            precondition(!started.value, "a task started on a shut-down loop")
        }
        let message = String(decoding: exit?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Swift Concurrency job was dropped"), "\(message)")
    }

    @Test("run, runUntilIdle and run(until:) after shutdown return at once")
    func drivingAfterShutdownReturns() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            loop.shutdown()
            loop.run()
            loop.runUntilIdle()
            let pending = Promise<Int, Never>.makeWithResolver()
            precondition(loop.run(until: pending.0).isCancelled, "run(until:) of a pending promise")
            precondition(loop.run(until: Promise<Int, Never>(fulfilled: 3)).value == 3, "run(until:) of a resolved one")
            _ = pending.1
        }
    }

    @Test("run(until:) whose loop is shut down from another thread returns .cancelled instead of trapping")
    func runUntilReturnsWhenTheLoopShutsDownUnderIt() {
        let loop = EventLoop()
        let pending = Promise<Int, Never>.makeWithResolver()
        loop.execute { DispatchQueue.global().async { loop.shutdown() } }
        #expect(loop.run(until: pending.0).isCancelled)
        #expect(loop.isShutdownComplete)
        _ = pending.1
    }

    @Test("work accepted while the loop shuts down runs: the loop closes only when none waits")
    func workAcceptedDuringShutdownRuns() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let accepted = Locked(0)
        let ran = Locked(0)
        let submitters = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: submitters) {
                for _ in 0..<2000 {
                    if loop.execute({ ran.withLock { $0 += 1 } }) { accepted.withLock { $0 += 1 } }
                }
            }
        }
        loop.shutdown()
        submitters.wait()
        #expect(thread.join())
        #expect(loop.isShutdownComplete)
        #expect(ran.value == accepted.value, "every accepted closure ran, none of the refused")
    }
}

/// Whether `result` is `.cancelled`.
func isCancelled<Value, Error>(_ result: PromiseResult<Value, Error>) -> Bool {
    result.isCancelled
}
