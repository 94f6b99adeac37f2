import Tomorrowland
package import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension TestLoop {
    /// The most drain rounds shutdown runs before it gives up on work that keeps queueing work,
    /// as on `EventLoop`.
    static let shutdownDrainRounds = 1000

    /// Shuts the loop down for good, with the outcomes and in the order of `EventLoop`'s
    /// `shutdown()`:
    ///
    /// 1. **Pending timers** are released without running. A promise waiting on one of this
    ///    loop's timers ends **cancelled**: a `timeout` or `delay` on
    ///    ``Tomorrowland/PromiseContext/loop(_:)``, `Promise(on: .loop(loop), …after:)`, a `retry`
    ///    waiting out its backoff. Their callbacks on this loop still run in step 2. Cancelling
    ///    their handles afterwards does nothing.
    /// 2. **Ready work runs**: everything already submitted, and what that work submits, in FIFO
    ///    order, in rounds, until nothing is left (at most 1000 rounds). Timers scheduled
    ///    meanwhile are released as in step 1. The virtual clock does not move.
    /// 3. The loop **closes**: nothing is pending, ``isShutdownComplete`` is true, and work that
    ///    arrives from now on never runs:
    ///    - a promise callback aimed at the loop does not run; what it captured is released on the
    ///      resolving thread, and the promise it would have resolved ends **cancelled** (so a
    ///      `map` on ``Tomorrowland/PromiseContext/loop(_:)`` gives a cancelled promise, and a
    ///      `tap`/`always` observer is released unrun), without deep recursion however long the
    ///      chain of such callbacks;
    ///    - ``submit(_:)`` releases the closure;
    ///    - ``schedule(after:_:)`` returns a handle whose work never runs (it is released when the
    ///      call returns), so a `timeout`, `delay` or `Promise(…after:)` on this loop ends
    ///      cancelled;
    ///    - a Swift Concurrency job (a task that prefers the loop, an actor pinned to it) is
    ///      dropped and its task never resumes;
    ///    - ``run()``, ``advance(by:)``, ``advance(to:)`` and ``runAll(maxSteps:)`` return at once
    ///      without moving the clock; ``run(until:timeLimit:maxSteps:)`` returns the promise's
    ///      result if it has one and throws a ``TestLoopFailure`` otherwise.
    ///
    ///    Closures and Concurrency jobs dropped this way are reported with one line on standard
    ///    error, once per loop. Work still queued past step 2's round limit (work that keeps
    ///    queueing work) is refused the same way.
    ///
    /// Where it happens: called from inside the loop's work, the loop finishes the item in
    /// progress, shuts down inside the driving call, and that call returns (``now`` stays at the
    /// time of that item). Called while another thread drives the loop, it asks that call to shut
    /// down after its current item and returns at once (``isShutdownComplete`` tells when it is
    /// done). Otherwise it shuts down on the calling thread before returning. Calling it again does
    /// nothing. Work runs on the thread that shuts the loop down.
    public func shutdown() {
        let action = state.withLock { $0.lifecycle.requestShutdown(by: LoopLifecycle.currentThread) }
        // `.tearDownAfterCurrentTask` and `.wakeDriver` both leave the teardown to the driving
        // call, which asks for it before each item and when it ends.
        if action == .tearDownNow {
            ExecutionFlags.running(on: self) { tearDown() }
        }
    }

    /// Whether ``shutdown()`` has completed: the loop is closed, nothing is pending, and work
    /// submitted from now on is refused.
    ///
    /// Safe from any thread.
    public var isShutdownComplete: Bool {
        state.withLock { $0.lifecycle.phase == .closed }
    }

    /// Performs shutdown (steps 1 to 3 of ``shutdown()``) on the calling thread, which drives the
    /// loop; the lifecycle is shutting down, and ends closed.
    func tearDown() {
        let closed = drainForShutdown(maxRounds: Self.shutdownDrainRounds)
        guard !closed else { return }
        // Work that keeps queueing work: close anyway, and refuse what is left, outside the lock
        // (refusing runs deinitializers and cancelled promises' callbacks, which may submit again
        // and are refused in turn).
        let me = LoopLifecycle.currentThread
        let leftovers = state.withLock { state in
            state.lifecycle.finishTeardown(by: me)
            return state.core.removeAllReady() + state.core.removeAllTimers()
        }
        for work in leftovers { refuseLateWork(work) }
    }

    /// Refuses work that arrived after shutdown, on the submitting thread, with the policy the
    /// `EventLoop` uses (`LateWorkRefusal`): a promise callback is abandoned (not run, its promise
    /// cancelled), a closure released, a Swift Concurrency job dropped; closures and jobs are
    /// reported once per loop on standard error.
    func refuseLateWork(_ work: consuming LoopWork) {
        lateWork.refuse(work, on: self)
    }
}

/// Shutdown's drain, shared with `EventLoop`: every access to the core takes the loop's lock.
extension TestLoop: ShutdownDrain {
    package func withCore<Result>(_ body: (SchedulingCore) -> Result) -> Result {
        state.withLock { body($0.core) }
    }

    /// Other threads submit into the core directly, under the lock.
    package func takeSubmissions() {}

    package func closeIfEmpty() -> Bool {
        let me = LoopLifecycle.currentThread
        return state.withLock { state -> Bool in
            guard state.core.isEmpty else { return false }
            state.lifecycle.finishTeardown(by: me)
            return true
        }
    }
}
