import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `PromiseExecutor.storeTimer(_:after:)` and `cancelStoredTimer(_:)`: an executor that keeps
/// promise timers itself gets the timer object (no closure, no handle), cancels it by identifier,
/// and tells it when it will never run it; one that declines (the default) gets the self-guarded
/// closure as before.
@Suite("stored promise timers")
struct StoredTimerTests {
    @Test func anExecutorThatDoesNotImplementItStoresNothing() {
        let executor = StoringTimerExecutor(stores: false)
        #expect(executor.defaultStoreTimer() == nil)
    }

    @Test func everyPromiseTimerIsStoredByAnExecutorThatStoresTimers() {
        let executor = StoringTimerExecutor(stores: true)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(5))
        let after = Promise<Int, String>(on: .executor(executor), fulfilled: 1, after: .seconds(6))
        let delayed = Promise<Int, String>(fulfilled: 2).delay(on: .executor(executor), .seconds(7))
        #expect(
            executor.events == [
                "store 1 \(Duration.seconds(5))", "store 2 \(Duration.seconds(6))", "store 3 \(Duration.seconds(7))",
            ])
        executor.fireAll()
        executor.runSubmitted()
        #expect(timeout.result == .error(.timedOut))
        #expect(after.result == .value(1))
        #expect(delayed.result == .value(2))
        #expect(executor.storedCount == 0)
        withExtendedLifetime(resolver) {}
    }

    @Test func anExecutorThatDeclinesGetsTheSelfGuardedClosure() {
        let executor = StoringTimerExecutor(stores: false)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(5))
        #expect(executor.events == ["self-guarded \(Duration.seconds(5))"])
        executor.fireAll()
        executor.runSubmitted()
        #expect(timeout.result == .error(.timedOut))
        withExtendedLifetime(resolver) {}
    }

    @Test func aResolvedUpstreamCancelsTheStoredTimerByItsIdentifierInsideFulfil() {
        let executor = StoringTimerExecutor(stores: true)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(30))
        #expect(executor.storedCount == 1)
        resolver.fulfill(with: 7)
        #expect(executor.events == ["store 1 \(Duration.seconds(30))", "cancel 1"])
        #expect(executor.storedCount == 0)
        executor.runSubmitted()
        #expect(timeout.result == .value(7))
    }

    @Test func aStoredTimerFiredAfterItWasCancelledDoesNothing() {
        // An executor whose cancel from another thread races the timer's start may still fire it.
        let executor = StoringTimerExecutor(stores: true, keepsCancelled: true)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(30))
        let after = Promise<Int, String>(on: .executor(executor), fulfilled: 1, after: .seconds(5))
        resolver.fulfill(with: 7)
        after.requestCancel()
        executor.fireAll()
        executor.runSubmitted()
        #expect(timeout.result == .value(7))
        #expect(after.result == .cancelled)
    }

    @Test func aStoredTimerTheExecutorReleasesCancelsWhatWaitsOnItAndTheTimeoutsUpstream() {
        let executor = StoringTimerExecutor(stores: true)
        let requests = Recorder<String>()
        let (timeout, resolver) = sealedUpstream(requests: requests, cancels: false) {
            $0.timeout(on: .executor(executor), delay: .seconds(30))
        }
        let delayed = Promise<Int, String>(fulfilled: 2).delay(on: .executor(executor), .seconds(7))
        let retried = Promise<Int, String>.retry(
            on: .executor(executor), attempts: 2, backoff: .fixed(.seconds(1))
        ) { _ in Promise(rejected: "no") }
        executor.runSubmitted()
        #expect(executor.storedCount == 3)
        executor.releaseAll()
        executor.runSubmitted()
        #expect(timeout.result == .cancelled)
        #expect(requests.values == ["cancel requested"])
        #expect(delayed.result == .cancelled)
        #expect(retried.result == .cancelled)
        // Released twice, or fired after the release: nothing more happens.
        executor.releaseAll()
        executor.fireAll()
        #expect(timeout.result == .cancelled)
        withExtendedLifetime(resolver) {}
    }

    @Test func aTimerCancelledWhileTheExecutorStoresItIsRemovedByItsIdentifier() {
        // As if the upstream resolved on another thread between the store and its return.
        let executor = StoringTimerExecutor(stores: true)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        executor.duringStore = { resolver.fulfill(with: 3) }
        let timeout = upstream.timeout(on: .executor(executor), delay: .seconds(30))
        #expect(executor.events == ["store 1 \(Duration.seconds(30))", "cancel 1"])
        #expect(executor.storedCount == 0)
        executor.runSubmitted()
        #expect(timeout.result == .value(3))
    }

    @Test func aTimeoutOnANowOrContextStoresItsTimerAndCancelsItOnTheNamedExecutor() {
        let executor = StoringTimerExecutor(stores: true)
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .nowOr(.executor(executor)), delay: .seconds(30))
        #expect(executor.storedCount == 1)
        resolver.fulfill(with: 4)
        #expect(executor.events == ["store 1 \(Duration.seconds(30))", "cancel 1"])
        #expect(executor.storedCount == 0)
        executor.runSubmitted()
        #expect(timeout.result == .value(4))
    }

    @Test func aTimeoutWhoseContextDoesNotNameItsExecutorNeverStoresItsTimer() {
        // `.immediate` is `.auto` as evaluated at creation: a Dispatch executor, which declines;
        // the timer is armed self-guarded, and the upstream's result still cancels it.
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let timeout = upstream.timeout(on: .immediate, delay: .seconds(30))
        resolver.fulfill(with: 5)
        #expect(timeout.result == .value(5))
    }
}

/// Stores promise timers as an event loop does (or declines, as the default does), records every
/// call, and fires or releases the stored timers when a test says so.
private final class StoringTimerExecutor: PromiseExecutor, Sendable {
    private struct State {
        var recorded: [String] = []
        var submitted: [@Sendable () -> Void] = []
        var stored: [(id: PromiseTimerID, timer: any PromiseTimerJob)] = []
        var closures: [@Sendable () -> Void] = []
        var nextSequence: UInt64 = 1
        var storeHook: (@Sendable () -> Void)?
    }

    // Timers and closures run outside the lock.
    private let state = Locked(State())
    private let stores: Bool
    private let keepsCancelled: Bool

    init(stores: Bool, keepsCancelled: Bool = false) {
        self.stores = stores
        self.keepsCancelled = keepsCancelled
    }

    var events: [String] { state.withLock { $0.recorded } }
    var storedCount: Int { state.withLock { $0.stored.count } }
    /// Runs once inside the next `storeTimer`, after the timer is stored.
    var duringStore: (@Sendable () -> Void)? {
        get { state.withLock { $0.storeHook } }
        set { state.withLock { $0.storeHook = newValue } }
    }

    private func record(_ event: String) {
        state.withLock { $0.recorded.append(event) }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.submitted.append(work) }
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        record("schedule \(delay)")
        state.withLock { $0.closures.append(work) }
        return NoHandle()
    }

    func scheduleSelfGuarded(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) -> any PromiseScheduledWork {
        record("self-guarded \(delay)")
        state.withLock { $0.closures.append(work) }
        return NoHandle()
    }

    func storeTimer(_ timer: any PromiseTimerJob, after delay: Duration) -> PromiseTimerID? {
        guard stores else { return nil }
        let (id, hook) = state.withLock { state -> (PromiseTimerID, (@Sendable () -> Void)?) in
            let id = PromiseTimerID(slot: 0, sequence: state.nextSequence)
            state.nextSequence += 1
            state.stored.append((id, timer))
            state.recorded.append("store \(id.sequence) \(delay)")
            defer { state.storeHook = nil }
            return (id, state.storeHook)
        }
        hook?()
        return id
    }

    func cancelStoredTimer(_ id: PromiseTimerID) {
        let removed = state.withLock { state -> (any PromiseTimerJob)? in
            state.recorded.append("cancel \(id.sequence)")
            guard !keepsCancelled, let index = state.stored.firstIndex(where: { $0.id == id }) else { return nil }
            return state.stored.remove(at: index).timer
        }
        // Released here, outside the lock.
        withExtendedLifetime(removed) {}
    }

    var isCurrent: Bool { false }

    /// What the protocol's default `storeTimer` answers.
    func defaultStoreTimer() -> PromiseTimerID? {
        DefaultOnly().storeTimer(DummyTimer(), after: .seconds(1))
    }

    /// Fires every stored timer and runs every timer closure, in the order they came.
    func fireAll() {
        let (timers, work) = state.withLock { state in
            defer {
                state.stored = []
                state.closures = []
            }
            return (state.stored.map(\.timer), state.closures)
        }
        for timer in timers { timer.timerFired() }
        for item in work { item() }
    }

    /// Releases every stored timer unrun, as an executor that shut down does.
    func releaseAll() {
        let timers = state.withLock { state in
            defer { state.stored = [] }
            return state.stored.map(\.timer)
        }
        for timer in timers { timer.timerReleased() }
    }

    /// Runs the submitted work, and what it submits, until none is left.
    func runSubmitted() {
        while true {
            let work = state.withLock { state in
                defer { state.submitted = [] }
                return state.submitted
            }
            if work.isEmpty { return }
            for item in work { item() }
        }
    }
}

private struct NoHandle: PromiseScheduledWork {
    func cancel() {}
}

/// An executor that implements only what it must: the protocol's defaults for the rest.
private final class DefaultOnly: PromiseExecutor {
    func submit(_ work: @escaping @Sendable () -> Void) {}
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        NoHandle()
    }
    var isCurrent: Bool { false }
}

private final class DummyTimer: PromiseTimerJob {
    func timerFired() {}
    func timerReleased() {}
}
