import CLibevent
import Synchronization
import Tomorrowland
package import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

extension EventLoop {
    /// The most drain rounds shutdown runs before it gives up on work that keeps queueing work.
    static let shutdownDrainRounds = 1000

    /// Shuts the loop down for good, in this order:
    ///
    /// 1. **Watchers** are cancelled: their libevent events are freed, their handlers are released
    ///    without being called again, and a promise form waiting on one (``readable(_:)``,
    ///    ``writable(_:)``, ``signal(_:)``) is rejected with ``EventLoopError/shutDown``. New
    ///    watchers are refused with that error from now on.
    ///    **TCP** listeners close, connection attempts reject with ``TCPError/closed``, and open
    ///    connections close: their pending reads and writes reject with ``TCPError/closed`` and
    ///    their ``TCPConnection/closed`` promise resolves with `nil`.
    /// 2. **Pending timers** are cancelled without running and their work is released. A promise
    ///    waiting on one of this loop's timers ends **cancelled**: ``sleep(for:)``, a `timeout` or
    ///    `delay` on ``Tomorrowland/PromiseContext/loop(_:)``, `Promise(on: .loop(loop), …after:)`,
    ///    a `retry` waiting out its backoff. Their callbacks on this loop still run in step 3.
    ///    Cancelling their handles afterwards does nothing.
    /// 3. **Ready work runs**: everything already submitted, from any thread, and what that work
    ///    submits, in FIFO order, in rounds, until nothing is left (at most 1000 rounds). Timers
    ///    scheduled meanwhile are cancelled as in step 2. Work the loop accepted runs: the loop
    ///    closes only when no submission is waiting.
    /// 4. The loop **closes**. Work that arrives from now on (a Dispatch worker finishing late is
    ///    the usual case) never runs and never crashes the process:
    ///    - a promise callback aimed at the loop does not run; what it captured is released on the
    ///      resolving thread, and the promise it would have resolved ends **cancelled** (so a
    ///      `map` on ``Tomorrowland/PromiseContext/loop(_:)`` gives a cancelled promise, and a
    ///      `tap`/`always` observer is released unrun);
    ///    - ``execute(_:)`` returns `false` and releases the closure;
    ///    - ``schedule(after:_:)`` returns a handle whose work never runs, and a `timeout`,
    ///      `delay` or `Promise(…after:)` on this loop ends cancelled;
    ///    - a Swift Concurrency job (a task that prefers the loop, an actor pinned to it) is
    ///      dropped and its task never resumes: no other thread may run it;
    ///    - ``run()`` and ``runUntilIdle()`` return at once, ``run(until:)`` returns the promise's
    ///      result if it has one, `.cancelled` otherwise;
    ///    - new watchers, listeners and connections are refused with an error.
    ///    Closures and Concurrency jobs dropped this way are reported with one line on standard
    ///    error, once per loop. Work still queued past step 3's round limit (work that keeps
    ///    queueing work) is refused the same way.
    /// 5. libevent objects are freed in dependency order (events, then the base if the loop owns
    ///    it); a borrowed base is left to its owner. The loop gives up signal ownership.
    ///
    /// Where it happens: called from inside the loop's work, the loop finishes the task in
    /// progress, shuts down on its own thread, and the ``run()`` in progress returns. Called from
    /// another thread while a thread drives the loop, it asks that thread to shut down and returns
    /// at once (the driver's ``run()`` returns when done; ``isShutdownComplete`` tells when).
    /// Called when no thread drives the loop, it shuts down on the calling thread before
    /// returning. Calling it again does nothing.
    ///
    /// - Important: For a borrowed base that a host is running, call this on the host's loop
    ///   thread (inside the loop's work), never from another thread while the host runs the base.
    public func shutdown() {
        let me = LoopLifecycle.currentThread
        if inEventLoop {
            // Inside the loop's work (the caller is the driver): after the task in progress.
            guard confinedPhase == .open else { return }
            let action = inbox.withLock { $0.lifecycle.requestShutdown(by: me) }
            if action == .tearDownAfterCurrentTask { confinedPhase = .shutdownRequested }
            return
        }
        let action = inbox.withLock { $0.lifecycle.requestShutdown(by: me) }
        switch action {
        case .tearDownNow:
            // No thread drove the loop: this one now does, to tear it down.
            ExecutionFlags.running(on: self) { tearDown() }
        case .wakeDriver:
            wakeUp()
        case .tearDownAfterCurrentTask, .none:
            break
        }
    }

    /// Performs shutdown on the loop's thread (steps 1 to 5 of ``shutdown()``). The lifecycle is
    /// in its shutting-down phase, with the calling thread as the driver; it ends closed.
    func tearDown() {
        precondition(confinedPhase != .closed, "EventLoop: torn down twice")
        confinedPhase = .shuttingDown

        cancelAllWatchers()
        closeAllResources()
        let me = LoopLifecycle.currentThread
        var leftovers: [LoopWork] = []
        let closed = drainForShutdown(maxRounds: Self.shutdownDrainRounds)
        var lateTimers: [InboxTimer] = []
        if !closed {
            // Work that keeps queueing work: close anyway, and refuse what is left.
            inbox.withLock { inbox in
                inbox.lifecycle.finishTeardown(by: me)
                swap(&inbox.work, &leftovers)
                swap(&inbox.timers, &lateTimers)
            }
        }
        for timer in lateTimers { timer.handle.markCancelled() }
        lateTimers.removeAll()
        confinedPhase = .closed
        spareInboxWork = []
        // Refused outside the lock: refusing runs deinitializers and cancelled promises'
        // callbacks, which may submit again (and are refused in turn).
        leftovers += core.removeAllReady()
        for work in leftovers { refuseLateWork(work) }
        leftovers.removeAll()
        for timer in core.removeAllTimers() { timer.releaseUnrun() }

        backend.dynamic.loopDidShutDown(self)
        monitor.close()
        reportPendingPromisesAtShutdown()
    }

    /// With ``Tomorrowland/PendingPromiseTracking`` on: writes to standard error the promises
    /// made on this loop's thread (inside its work) that are still pending now that it is closed,
    /// oldest first. Nothing when tracking is off, or when none is pending.
    private func reportPendingPromisesAtShutdown() {
        guard PendingPromiseTracking.isOn else { return }
        let pending = PendingPromiseTracking.pending(madeOn: self)
        guard !pending.isEmpty else { return }
        let address = String(UInt(bitPattern: ObjectIdentifier(self)), radix: 16)
        let lines = pending.map { "  \($0)" }.joined(separator: "\n")
        writeLineToStandardError(
            "EventLoop 0x\(address) shut down with \(pending.count) promise\(pending.count == 1 ? "" : "s") made on it still pending, oldest first:\n\(lines)"
        )
    }

    /// What `deinit` does for a loop that was never shut down: release everything, run nothing.
    ///
    /// Promise callbacks still queued are abandoned (their promises end cancelled); none of them
    /// can be aimed at this loop any more, since a callback's context keeps its loop alive.
    func releaseEverythingWithoutRunning() {
        var queued: [LoopWork] = []
        var timers: [InboxTimer] = []
        inbox.withLock { inbox in
            inbox.lifecycle.closeWithoutTeardown()
            swap(&inbox.work, &queued)
            swap(&inbox.timers, &timers)
        }
        timers.removeAll()
        confinedPhase = .closed
        // The watchers' registrations go to the backend with the rest: on a borrowed base this
        // may be any thread while the host runs the base, and nothing of the base is touched here.
        // LoopInvariants: "Unretained callback arguments" (the borrowed-base exception).
        let orphanedWatchers = detachAllWatchers()
        queued += core.removeAllReady()
        // A stored promise timer keeps its context, so its loop, alive: none can be left here;
        // released as at shutdown all the same.
        for timer in core.removeAllTimers() { timer.releaseUnrun() }
        for work in queued {
            if case .promiseJob(let job) = work { job.abandon() }
        }
        backend.dynamic.loopWasReleased(self, watchers: orphanedWatchers)
        monitor.close()
    }

    /// What `deinit` does with the watchers: like ``cancelAllWatchers()`` (handlers released,
    /// promise forms rejected), but their registrations are left for the backend to end. Returns
    /// the watchers, whose registrations (libevent events) still carry them.
    private func detachAllWatchers() -> [EventLoopWatcher] {
        let live = Array(watchers.values)
        watchers.removeAll()
        for watcher in live {
            let onShutdown = watcher.onShutdown
            watcher.markCancelled()
            watcher.handler = nil
            watcher.onShutdown = nil
            onShutdown?()
        }
        return live
    }
}

/// Shutdown's drain, shared with `TestLoop`: on the loop's own thread the core needs no lock.
extension EventLoop: ShutdownDrain {
    package func withCore<Result>(_ body: (SchedulingCore) -> Result) -> Result {
        body(core)
    }

    package func takeSubmissions() {
        takeInbox()
    }

    package func closeIfEmpty() -> Bool {
        let me = LoopLifecycle.currentThread
        return inbox.withLock { inbox -> Bool in
            guard inbox.work.isEmpty && inbox.timers.isEmpty else { return false }
            inbox.lifecycle.finishTeardown(by: me)
            return true
        }
    }
}
