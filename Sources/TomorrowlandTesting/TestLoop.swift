import Synchronization
import Tomorrowland
package import TomorrowlandScheduling

/// A deterministic executor with a virtual clock, for tests.
///
/// Nothing runs until the test drives the loop: ``run()`` runs the work that is ready now,
/// ``advance(by:)`` and ``advance(to:)`` move the virtual clock and fire the timers that come due,
/// ``runAll(maxSteps:)`` drains every pending timer. Work runs on the thread that drives the loop, inside
/// the driving call, so the same test gives the same interleaving on every run.
///
/// ```swift
/// let loop = TestLoop()
/// let promise = Promise<Int, String>(on: .loop(loop)) { resolver in
///     _ = loop.schedule(after: .seconds(5)) { resolver.fulfill(with: 1) }
/// }
/// loop.advance(by: .seconds(4))        // the handler ran and armed the timer; no value yet
/// #expect(promise.result == nil)
/// loop.advance(by: .seconds(1))        // the timer fires at exactly 5 s
/// #expect(promise.result == .value(1))
/// try loop.checkNoPendingWork()
/// ```
///
/// ## Time
///
/// ``now`` is a `Duration`: the virtual time since the loop was created, starting at `.zero`. It
/// only moves when the test drives the loop, never backwards, and in whole nanoseconds. While a
/// timer runs, ``now`` is that timer's deadline; once a driving call returns, ``now`` is its
/// target.
///
/// ## Order
///
/// `TestLoop` and `EventLoop` run one scheduling policy, written once (the shared
/// `SchedulingCore`, and one way of running Swift Concurrency jobs); only the clock and the
/// waiting differ. The loop works in rounds: a round at ``now``, then one at each timer deadline
/// the clock advances to, each running every item due then. Ready work runs in FIFO order (the
/// order of the `submit` calls, jobs of tasks and actors on the loop included); the timers due when
/// the loop looks run in (deadline, scheduling order), before the work their callbacks submit; a
/// zero delay joins the ready work behind what was already submitted; work submitted while the
/// loop runs runs in the same driving call, never inside the call that submitted it.
///
/// A cross-loop suite runs the same scenarios on this loop and on an `EventLoop` and checks that
/// they give the same trace. What it covers, and what a virtual clock cannot show (time passing
/// during work, descriptors, signals, wake-ups from other threads), is listed in the
/// <doc:DeterministicTestsWithTestLoop> article.
///
/// ## Threads
///
/// The loop is meant for one test thread, but it is safe to submit, schedule, cancel and read the
/// introspection properties from any thread: that state sits behind a lock. Work never runs on
/// the submitting thread; it waits until the test drives the loop. Work submitted from another
/// thread is ordered by when its `submit` took the lock, which only the test can make
/// deterministic.
///
/// Driving (``run()``, ``advance(by:)``, ``advance(to:)``, ``runAll(maxSteps:)``) is exclusive: driving the
/// loop from inside its own work, or from two threads at once, stops the program with a
/// precondition failure, because neither has a deterministic meaning.
///
/// The loop never calls work, or releases it, while holding its lock, so work may use the loop
/// freely.
public final class TestLoop: PromiseExecutor {
    struct State: ~Copyable {
        let core = SchedulingCore()
        /// Which thread's driving call (or shutdown) holds the loop, and how far shutdown has got.
        var lifecycle = LoopLifecycle()
        /// Whether the test said it leaves work pending on purpose (`expectPendingWorkAtEnd()`).
        var expectsPendingWorkAtEnd = false
    }

    // The core is not thread-safe; every access to it goes through this lock, and work taken
    // out of it runs, and is released, after unlocking. All mutable state lives here, which is
    // what makes the class Sendable without `@unchecked`.
    let state = LockedValue(State())
    /// What happens to work that reaches the loop after its shutdown (the EventLoop's policy).
    let lateWork = LateWorkRefusal(loopKind: "TestLoop")
    /// The core's current time, copied after each change (under the lock), for readers that must
    /// not take the lock: the pending-promise tracking reads it when a promise is made, which may
    /// be under this very lock.
    let publishedTime = Atomic<UInt64>(0)

    /// Creates a loop whose virtual clock reads `.zero`, with nothing pending.
    public init() {}

    // MARK: - PromiseExecutor

    /// Queues `work` to run on this loop, at the current virtual time, once the test drives it.
    ///
    /// Never runs `work` inside this call. Safe from any thread. After ``shutdown()``, `work` is
    /// released without running.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        enqueue(.closure(work))
    }

    /// Queues a promise callback like ``submit(_:)``, without allocating a closure around it.
    ///
    /// After ``shutdown()`` the job is abandoned on the calling thread
    /// (`PromiseJob.abandon()`): the callback does not run, what it captured is
    /// released, and the promise it would have resolved ends cancelled.
    public func submit(job: consuming any PromiseJob) {
        enqueue(.promiseJob(consume job))
    }

    /// Schedules `work` to run when the virtual clock reaches ``now`` + `delay`.
    ///
    /// `work` runs on the thread that drives the loop past that time, with ``now`` equal to the
    /// deadline. A zero or negative `delay` means the current virtual time: the timer then runs at
    /// the next ``run()``, after the work already due. Timers with equal deadlines run in
    /// scheduling order. Safe from any thread.
    ///
    /// ``shutdown()`` releases pending timers without running them. Scheduling on a loop that was
    /// shut down returns a handle whose work never runs: `work` is not kept, so it is released
    /// when this call returns, and a `timeout`, `delay` or `Promise(on:…after:)` on the loop ends
    /// cancelled.
    ///
    /// - Returns: A handle whose `cancel()` removes the timer (in O(log n)) and releases `work`.
    public func schedule(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) -> any PromiseScheduledWork {
        let nanoseconds = delay.schedulingNanoseconds
        let id = state.withLock { state -> PromiseTimerID? in
            guard state.lifecycle.admitsWork else { return nil }
            return state.core.schedule(at: state.core.deadline(after: nanoseconds), .closure(work))
        }
        guard let id else {
            // Shut down: `work` is not kept, so the caller's release right after this call is
            // its last (a promise timer learns from it that it will never fire).
            refuseLateWork(.closure(work))
            return RefusedScheduledWork()
        }
        return LoopTimerReference<TestLoopTimerAccess>(loop: self, id: id)
    }

    /// Whether the calling thread is running this loop's work right now: true inside work the
    /// loop runs (and during the driving call that runs it), false elsewhere.
    public var isCurrent: Bool {
        ExecutionFlags.isRunning(on: self)
    }

    // MARK: - Introspection

    /// The virtual time since the loop was created.
    ///
    /// While a timer runs, its deadline; after a driving call, that call's target.
    public var now: Duration {
        Duration(schedulingNanoseconds: state.withLock { $0.core.currentTime })
    }

    /// The number of submitted items (closures and jobs) waiting for the next ``run()``.
    public var readyCount: Int {
        state.withLock { $0.core.readyCount }
    }

    /// The number of pending timers.
    public var timerCount: Int {
        state.withLock { $0.core.timerCount }
    }

    /// Everything still pending: ready items plus timers. Zero once the test has run all it
    /// started; see ``checkNoPendingWork()``.
    public var pendingWorkCount: Int {
        state.withLock { $0.core.pendingCount }
    }

    /// The virtual time at which the earliest pending timer fires, or nil without timers.
    public var nextTimerDeadline: Duration? {
        state.withLock { $0.core.nextTimerDeadline }.map(Duration.init(schedulingNanoseconds:))
    }

    /// Throws a ``TestLoopFailure`` describing what is still pending, if anything is.
    ///
    /// Call it at the end of a test: work left behind is usually a timer nobody cancelled or a
    /// callback nobody ran, which the test should have seen.
    public func checkNoPendingWork() throws(TestLoopFailure) {
        try checkNoPendingWork(naming: nil)
    }

    /// ``checkNoPendingWork()``, whose failure also names the pending promises of `scope`.
    func checkNoPendingWork(naming scope: PendingPromiseScope?) throws(TestLoopFailure) {
        let (ready, timers, next) = state.withLock { state in
            (state.core.readyCount, state.core.timerCount, state.core.nextTimerDeadline)
        }
        guard ready == 0 && timers == 0 else {
            var message = "TestLoop has pending work: \(ready) ready item(s) and \(timers) timer(s)"
            if let next {
                message += ", the earliest due at \(Duration(schedulingNanoseconds: next))"
            }
            message += " (now is \(now)). Run or cancel it before the test ends."
            if let scope { message += Self.pendingPromisesClause(in: scope) }
            throw TestLoopFailure(message)
        }
    }

    // MARK: - Driving

    /// Runs the work that is ready now, including the work it submits, without moving the clock.
    ///
    /// Timers due at the current time (zero delays) run too, in order. Work runs on the calling
    /// thread, before this returns. After ``shutdown()`` this does nothing.
    public func run() {
        drive(to: state.withLock { $0.core.currentTime })
    }

    /// Moves the clock forward by `duration`, running everything that comes due on the way.
    ///
    /// Ready work runs first; then timers fire in deadline order (equal deadlines in scheduling
    /// order), with ``now`` set to each timer's deadline before it runs; work they submit or
    /// schedule runs in this same call when it is due by the target, at the virtual time it was
    /// meant for. Afterwards ``now`` is the old value plus `duration`.
    ///
    /// After ``shutdown()`` this does nothing, and the clock stays where it is.
    ///
    /// - Precondition: `duration` is not negative.
    public func advance(by duration: Duration) {
        precondition(
            duration >= .zero,
            "TestLoop.advance(by: \(duration)): time cannot go backwards; pass a non-negative duration")
        let nanoseconds = duration.schedulingNanoseconds
        let target = state.withLock { state in
            let (sum, overflow) = state.core.currentTime.addingReportingOverflow(nanoseconds)
            return overflow ? UInt64.max : sum
        }
        drive(to: target)
    }

    /// Moves the clock forward to `instant` (a virtual time, as ``now`` reads), running everything
    /// that comes due on the way, as ``advance(by:)`` does.
    ///
    /// After ``shutdown()`` this does nothing, and the clock stays where it is.
    ///
    /// - Precondition: `instant` is not earlier than ``now``.
    public func advance(to instant: Duration) {
        let target = instant.schedulingNanoseconds
        let current = state.withLock { $0.core.currentTime }
        precondition(
            instant >= .zero && target >= current,
            "TestLoop.advance(to: \(instant)): time cannot go backwards (now is \(Duration(schedulingNanoseconds: current)))"
        )
        drive(to: target)
    }

    /// Runs everything: ready work, then every timer in order, advancing the clock to each
    /// deadline, until nothing is pending.
    ///
    /// Afterwards ``now`` is the deadline of the last timer that ran (it does not move when
    /// nothing was pending). Work runs on the calling thread, before this returns. After
    /// ``shutdown()`` this does nothing.
    ///
    /// Work that keeps scheduling more (a repeating timer) would never let the loop go idle, so
    /// after `maxSteps` items this stops the program with a precondition failure; drive such
    /// loops with ``advance(by:)`` instead.
    public func runAll(maxSteps: Int = 1_000_000) {
        let outcome = drain(maxSteps: maxSteps, limit: nil, until: { false })
        precondition(
            outcome != .reachedStepLimit,
            "TestLoop.runAll() ran \(maxSteps) items and work keeps coming (a timer that reschedules itself?); use advance(by:) for such loops"
        )
    }

    /// How ``drain(maxSteps:limit:until:)`` ended.
    enum DrainOutcome {
        /// `shouldStop` returned true.
        case stopped
        /// Nothing was pending any more.
        case idle
        /// The next item was due after the limit; the clock is at the limit.
        case reachedTimeLimit
        /// `maxSteps` items ran and more were due.
        case reachedStepLimit
        /// The loop is shut down: it was before the call, or work the call ran shut it down.
        case shutDown
    }

    /// Runs items one by one, in rounds at the current time and then at each timer deadline in
    /// turn, until `shouldStop()` (asked before the first item and after each) returns true, nothing
    /// is pending, the next item is due after `limit`, `maxSteps` items ran, or the loop shut down.
    ///
    /// When `shouldStop()` turns true the round in progress is finished first, as `EventLoop`
    /// finishes its tick: the work that was due at that time (what the item queued included) runs.
    /// When it is true before the first item, nothing runs.
    func drain(maxSteps: Int, limit: UInt64?, until shouldStop: () -> Bool) -> DrainOutcome {
        enum Step {
            case run(LoopWork)
            case tearDown
            case end(DrainOutcome)
        }
        if shouldStop() { return .stopped }
        guard beginDriving() else { return .shutDown }
        let me = LoopLifecycle.currentThread
        defer { endDriving() }
        return ExecutionFlags.running(on: self) {
            var steps = 0
            var stopping = false
            while true {
                if !stopping && steps > 0 && shouldStop() { stopping = true }
                let next = state.withLock { state -> Step in
                    if state.lifecycle.beginRequestedTeardown(by: me) { return .tearDown }
                    let core = state.core
                    if core.isInRound && core.hasWorkDueNow {
                        if steps == maxSteps && !stopping {
                            core.endRound()
                            return .end(.reachedStepLimit)
                        }
                        return .run(core.nextInRound()!)
                    }
                    core.endRound()
                    if stopping { return .end(.stopped) }
                    guard let look = core.nextLook(notAfter: limit ?? .max) else {
                        if core.isEmpty { return .end(.idle) }
                        core.advanceIdle(to: limit ?? core.currentTime)
                        publishedTime.store(core.currentTime, ordering: .relaxed)
                        return .end(.reachedTimeLimit)
                    }
                    if steps == maxSteps { return .end(.reachedStepLimit) }
                    core.beginRound(at: look)
                    publishedTime.store(core.currentTime, ordering: .relaxed)
                    guard let work = core.nextInRound() else { return .end(.idle) }
                    return .run(work)
                }
                switch next {
                case .run(let work):
                    steps += 1
                    perform(work)
                case .tearDown:
                    tearDown()
                    return shouldStop() ? .stopped : .shutDown
                case .end(let outcome):
                    return outcome
                }
            }
        }
    }

    /// Runs every item due by `target`, in rounds at the current time and at each timer deadline
    /// on the way, one item at a time with the lock released while each runs; tears the loop down
    /// instead when an item asked for ``shutdown()``.
    private func drive(to target: UInt64) {
        enum Step {
            case run(LoopWork)
            case tearDown
            case done
        }
        guard beginDriving() else { return }
        defer { endDriving() }
        let me = LoopLifecycle.currentThread
        ExecutionFlags.running(on: self) {
            while true {
                let next = state.withLock { state -> Step in
                    if state.lifecycle.beginRequestedTeardown(by: me) { return .tearDown }
                    let core = state.core
                    if core.isInRound, let work = core.nextInRound() { return .run(work) }
                    guard let look = core.nextLook(notAfter: target) else {
                        core.advanceIdle(to: target)
                        publishedTime.store(core.currentTime, ordering: .relaxed)
                        return .done
                    }
                    core.beginRound(at: look)
                    publishedTime.store(core.currentTime, ordering: .relaxed)
                    guard let work = core.nextInRound() else { return .done }
                    return .run(work)
                }
                switch next {
                case .run(let work):
                    perform(work)
                case .tearDown:
                    tearDown()
                    return
                case .done:
                    return
                }
            }
        }
    }

    /// Makes the calling thread the loop's driver, for one driving call.
    ///
    /// - Returns: False when the loop was shut down: the call does nothing.
    private func beginDriving() -> Bool {
        let me = LoopLifecycle.currentThread
        switch state.withLock({ $0.lifecycle.claim(by: me, for: .drive) }) {
        case .claimed:
            return true
        case .refused(.closed):
            return false
        case .refused(.drivenByCaller):
            preconditionFailure(
                "TestLoop driven from inside its own work; drive it from the test, and submit work instead of running it inline"
            )
        case .refused(.drivenByAnotherThread), .refused(.visitedByAnotherThread):
            // A visit is another thread's shutdown of the idle loop: no deterministic meaning
            // either, so not waited out as on `EventLoop`.
            preconditionFailure(
                "TestLoop driven from two threads at once; drive it from one thread only")
        }
    }

    /// Ends a driving call; tears the loop down first if another thread asked for ``shutdown()``
    /// after the call last looked.
    private func endDriving() {
        let me = LoopLifecycle.currentThread
        if state.withLock({ $0.lifecycle.release(by: me) }) == .tearDown {
            ExecutionFlags.running(on: self) { tearDown() }
        }
    }

    /// Runs one item on the calling thread, as every loop does (`LoopWork.run(asTaskExecutor:)`).
    package func perform(_ work: LoopWork) {
        work.run(asTaskExecutor: asUnownedTaskExecutor())
    }

    // MARK: - Internals for the handle and the executor conformances

    /// Queues `work` to run now, or refuses it (on the calling thread) after shutdown.
    func enqueue(_ work: LoopWork) {
        let refused = state.withLock { state -> LoopWork? in
            guard state.lifecycle.admitsWork else { return work }
            state.core.enqueue(work)
            return nil
        }
        // Refused after unlocking: abandoning a job runs promise callbacks.
        if let refused { refuseLateWork(refused) }
    }

    func cancel(_ id: PromiseTimerID) {
        let removed = state.withLock { $0.core.cancel(id) }
        // Released here, after unlocking: its deinitializers may call back into the loop.
        _ = consume removed
    }
}
