import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `PromiseExecutor.reserveTimerSlot()`: the head-of-line reservation is a requirement of the
/// executor protocol, with a default, and the promise timers use whatever an executor returns.
@Suite("timer reservation")
struct TimerReservationTests {
    @Test func anExecutorThatDoesNotImplementItReservesNothing() {
        #expect(TimerSpyExecutor(reserves: false).reserveTimerSlot() == nil)
    }

    @Test func anOperationQueueReservesAPlaceInLineAndCancellingFreesIt() throws {
        let queue = OperationQueue()
        let executor = OperationQueueExecutor(queue: queue)
        let reservation = try #require(executor.reserveTimerSlot())
        #expect(queue.operationCount == 1)
        reservation.cancel()
        #expect(waitUntil { queue.operationCount == 0 })
    }

    @Test func aTimeoutOnAReservingExecutorArmsThroughTheReservationNotSchedule() throws {
        let executor = TimerSpyExecutor(reserves: true)
        let (upstream, _) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(5))
        #expect(executor.events == ["reserve", "arm \(Duration.seconds(5))"])
        executor.fireArmedWork()
        #expect(timeout.result == .error(.timedOut))
    }

    @Test func aTimeoutWhoseUpstreamResolvedAlreadyReservesNothingAndArmsNothing() throws {
        // A timeout reserves its place as it arms, after registering on its upstream: a resolved
        // upstream has cancelled the timer by then.
        let executor = TimerSpyExecutor(reserves: true)
        let timeout = Promise<Int, String>(fulfilled: 1).timeout(on: .executor(executor), delay: .seconds(5))
        #expect(executor.events == [])
        // The result hops to the executor like any callback.
        executor.runSubmitted()
        #expect(timeout.result == .value(1))
    }

    @Test func aTimeoutArmedThroughItsReservationIsCancelledByItsUpstreamsResult() throws {
        let executor = TimerSpyExecutor(reserves: true)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(5))
        #expect(executor.holdsWork)
        resolver.fulfill(with: 2)
        // The handle the reservation returned is cancelled inside `fulfill`.
        #expect(executor.events == ["reserve", "arm \(Duration.seconds(5))", "cancel"])
        #expect(!executor.holdsWork)
        executor.runSubmitted()
        #expect(timeout.result == .value(2))
    }

    @Test func aTimeoutCancelledBeforeFiringReleasesTheExecutorsWorkAtOnce() throws {
        let executor = TimerSpyExecutor(reserves: false)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(30))
        #expect(executor.events == ["schedule \(Duration.seconds(30))"])
        #expect(executor.holdsWork)
        resolver.fulfill(with: 7)
        // Cancelled inside `fulfill`, before the result even reaches the executor.
        #expect(executor.events == ["schedule \(Duration.seconds(30))", "cancel"])
        #expect(!executor.holdsWork)
        executor.runSubmitted()
        #expect(timeout.result == .value(7))
    }

    @Test func aTimerTheExecutorReleasesUnrunCancelsTheTimeoutAndItsUpstream() throws {
        let executor = TimerSpyExecutor(reserves: false)
        let requests = Recorder<String>()
        let (timeout, resolver) = sealedUpstream(requests: requests, cancels: false) {
            $0.timeout(on: .executor(executor), delay: .seconds(30))
        }
        executor.dropArmedWork()
        #expect(timeout.result == .cancelled)
        // The timeout was the upstream's only observer: one cancel request reached it.
        #expect(requests.values == ["cancel requested"])
        withExtendedLifetime(resolver) {}
    }
}

/// Records what the promise timers ask of it; runs nothing until the test says so.
private final class TimerSpyExecutor: PromiseExecutor, Sendable {
    private struct State {
        var recorded: [String] = []
        var submitted: [@Sendable () -> Void] = []
        var armed: (@Sendable () -> Void)?
    }

    // Closures run outside the lock.
    private let state = Locked(State())
    private let reserves: Bool

    init(reserves: Bool) {
        self.reserves = reserves
    }

    var events: [String] { state.withLock { $0.recorded } }
    var holdsWork: Bool { state.withLock { $0.armed != nil } }

    func record(_ event: String) {
        state.withLock { $0.recorded.append(event) }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.submitted.append(work) }
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        record("schedule \(delay)")
        return keep(work)
    }

    var isCurrent: Bool { false }

    func reserveTimerSlot() -> (any PromiseTimerReservation)? {
        guard reserves else { return nil }
        record("reserve")
        return SpyReservation(executor: self)
    }

    /// Keeps `work` as the armed timer; the handle's cancel releases it.
    func keep(_ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        state.withLock { $0.armed = work }
        return SpyHandle(executor: self)
    }

    func cancelArmed() {
        record("cancel")
        let work = state.withLock { $0.armed.take() }
        withExtendedLifetime(work) {}
    }

    func fireArmedWork() {
        state.withLock { $0.armed.take() }?()
    }

    /// Releases the armed timer without running it, as an executor that shuts down does.
    func dropArmedWork() {
        let work = state.withLock { $0.armed.take() }
        withExtendedLifetime(work) {}
    }

    func runSubmitted() {
        for work in state.withLock({ $0.submitted.take() }) { work() }
    }
}

private final class SpyReservation: PromiseTimerReservation {
    let executor: TimerSpyExecutor

    init(executor: TimerSpyExecutor) {
        self.executor = executor
    }

    func arm(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        executor.record("arm \(delay)")
        return executor.keep(work)
    }

    func cancel() {
        executor.record("free reservation")
    }
}

private struct SpyHandle: PromiseScheduledWork {
    let executor: TimerSpyExecutor

    func cancel() {
        executor.cancelArmed()
    }
}

extension Array {
    /// Moves the elements out, leaving the array empty.
    fileprivate mutating func take() -> [Element] {
        defer { self = [] }
        return self
    }
}
