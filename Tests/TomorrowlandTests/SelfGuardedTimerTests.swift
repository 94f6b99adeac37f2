import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `PromiseExecutor.scheduleSelfGuarded(after:_:)`: the promise timers arm with it, and their
/// work does nothing when it starts after its timer was cancelled (the race an executor that
/// drops the cancel guarantee of `schedule(after:_:)` allows).
@Suite("self-guarded timers")
struct SelfGuardedTimerTests {
    @Test func promiseTimersArmWithTheSelfGuardedForm() {
        let executor = RacingTimerExecutor()
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        _ = upstream.timeout(on: .executor(executor), delay: .seconds(5))
        _ = Promise<Int, String>(on: .executor(executor), fulfilled: 1, after: .seconds(6))
        _ = Promise<Int, String>(fulfilled: 2).delay(on: .executor(executor), .seconds(7))
        #expect(
            executor.events == [
                "self-guarded \(Duration.seconds(5))", "self-guarded \(Duration.seconds(6))",
                "self-guarded \(Duration.seconds(7))",
            ])
        // Let the timers run, as a real executor would at their deadlines: until then the executor
        // keeps their work, which keeps the promises, which keep the executor (their context).
        executor.startKeptWork()
        executor.runSubmitted()
        withExtendedLifetime(resolver) {}
    }

    @Test func aTimeoutWhoseTimerStartsAfterItWasCancelledKeepsTheUpstreamsResult() throws {
        let executor = RacingTimerExecutor()
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(30))
        resolver.fulfill(with: 7)
        #expect(executor.events == ["self-guarded \(Duration.seconds(30))", "cancel"])
        // The executor starts the work although it was cancelled: it must do nothing.
        executor.startKeptWork()
        executor.runSubmitted()
        #expect(timeout.result == .value(7))
        #expect(upstream.result == .value(7))
    }

    @Test func anAfterInitializerWhoseTimerStartsAfterItWasCancelledStaysCancelled() throws {
        let executor = RacingTimerExecutor()
        let promise = Promise<Int, String>(on: .executor(executor), fulfilled: 1, after: .seconds(5))
        promise.requestCancel()
        #expect(promise.result == .cancelled)
        #expect(executor.events.last == "cancel")
        executor.startKeptWork()
        executor.runSubmitted()
        #expect(promise.result == .cancelled)
    }
}

/// Arms timers with the self-guarded form and, like an executor whose `cancel()` races the start
/// of the work on another thread, keeps the work after a cancel, so that a test can start it.
private final class RacingTimerExecutor: PromiseExecutor, Sendable {
    private struct State {
        var recorded: [String] = []
        var submitted: [@Sendable () -> Void] = []
        var kept: [@Sendable () -> Void] = []
    }

    // Closures run outside the lock.
    private let state = Locked(State())

    var events: [String] { state.withLock { $0.recorded } }

    func record(_ event: String) {
        state.withLock { $0.recorded.append(event) }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.submitted.append(work) }
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        record("schedule \(delay)")
        state.withLock { $0.kept.append(work) }
        return RacingHandle(executor: self)
    }

    func scheduleSelfGuarded(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) -> any PromiseScheduledWork {
        record("self-guarded \(delay)")
        state.withLock { $0.kept.append(work) }
        return RacingHandle(executor: self)
    }

    var isCurrent: Bool { false }

    /// Starts every timer's work, cancelled or not, as a racing executor may.
    func startKeptWork() {
        let work = state.withLock { state in
            defer { state.kept = [] }
            return state.kept
        }
        for item in work { item() }
    }

    func runSubmitted() {
        let work = state.withLock { state in
            defer { state.submitted = [] }
            return state.submitted
        }
        for item in work { item() }
    }
}

private struct RacingHandle: PromiseScheduledWork {
    let executor: RacingTimerExecutor

    func cancel() {
        executor.record("cancel")
    }
}
