import Synchronization
import Tomorrowland
package import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

extension EventLoop {
    /// The most items one round runs before the loop polls I/O again, so that work which keeps
    /// queueing work cannot starve descriptors and signals.
    static let roundBudget = 4096

    /// Runs the loop on the calling thread until ``stop()`` (or ``shutdown()``).
    ///
    /// Everything the loop does (submitted work, timers, watcher handlers, and, on the main thread,
    /// `DispatchQueue.main` blocks) runs on the calling thread, inside this call. Each tick reads
    /// the monotonic clock once, runs what is due in (deadline, sequence) order, then blocks in
    /// libevent until a descriptor, a signal, the timer or a wake-up fires.
    ///
    /// After ``shutdown()`` this returns at once: a daemon whose shutdown (a signal handled on
    /// another thread) wins the race against its `run()` just ends.
    ///
    /// - Important: One thread drives a loop at a time. Calling this while another thread runs the
    ///   loop, or from inside the loop's own work, is a precondition failure.
    public func run() {
        guard claimDriver("run()") else { return }
        drive { false }
    }

    /// Runs the loop like ``run()`` unless it was shut down; returns false then. For threads that
    /// drive a loop until it shuts down (``EventLoopGroup``, TomorrowlandServiceLifecycle's
    /// `EventLoopService`), which may race with the shutdown.
    package func runUnlessShutDown() -> Bool {
        while true {
            switch tryClaimDriver(for: .drive) {
            case .claimed:
                drive { false }
                return !isShutdownComplete
            case .refused(.closed):
                return false
            case .refused(.drivenByAnotherThread), .refused(.visitedByAnotherThread):
                // Another thread (a shutdown() or a hop onto the idle loop) holds the loop for a
                // moment.
                sched_yield()
            case .refused(.drivenByCaller):
                preconditionFailure("EventLoopGroup: a group's thread drives its loop from inside the loop's own work")
            }
        }
    }

    /// The body of ``run()``, for a thread that holds the driver role; releases it at the end.
    /// Returns after a tick that ends with a ``stop()`` request (consumed) or with `isDone` true,
    /// or after shutdown.
    func drive(until isDone: () -> Bool) {
        defer { releaseDriver() }
        ExecutionFlags.running(on: self) {
            backend.dynamic.driveWillStart()
            defer { backend.dynamic.driveDidEnd() }
            while true {
                runTick()
                if shutdownRequested {
                    tearDownAsRequested()
                    return
                }
                if stopRequested.exchange(false, ordering: .acquiringAndReleasing) || isDone() { return }
                if core.readyCount > 0 || !prepareToBlock() {
                    // More is ready (the round's budget ran out, or other threads submitted):
                    // poll descriptors without blocking, then tick again.
                    backend.poll(blocking: false)
                } else {
                    armTimer()
                    backend.poll(blocking: true)
                }
            }
        }
    }

    /// Processes everything that is ready now, without blocking: submitted work (and the work it
    /// submits), every timer due by now, ready descriptors and delivered signals, and, on the main
    /// thread, `DispatchQueue.main`.
    ///
    /// Each round polls the `event_base` once without blocking (running the handlers of ready
    /// watchers), then runs a tick. Returns after the first round whose tick ran nothing, when no
    /// other thread has submitted work in the meantime. Work runs on the calling thread.
    ///
    /// A descriptor that stays ready and whose handler keeps queueing work keeps this busy, like
    /// work that keeps resubmitting itself.
    ///
    /// After ``shutdown()`` this returns at once.
    ///
    /// - Important: Same rules as ``run()``: one driving thread at a time, not from inside the
    ///   loop's own work.
    public func runUntilIdle() {
        guard claimDriver("runUntilIdle()") else { return }
        defer { releaseDriver() }
        ExecutionFlags.running(on: self) {
            backend.dynamic.driveWillStart()
            defer { backend.dynamic.driveDidEnd() }
            while true {
                backend.poll(blocking: false)
                let ran = runTick()
                if shutdownRequested {
                    tearDownAsRequested()
                    return
                }
                // Watcher handlers that ran during the poll do not count as progress by
                // themselves: a descriptor that stays ready (a writable pipe) would never let
                // this return. Work they queued does.
                if !ran && core.readyCount == 0 && prepareToBlock() { break }
            }
            // The host may run the base next (borrowed loops): the timer must be armed for it.
            armTimer()
        }
    }

    // MARK: Ticks

    /// Reads the clock once, starts a round of the scheduling core there, takes the inbox into it,
    /// and runs the round (bounded by ``roundBudget``), stopping early after a task that asked for
    /// ``shutdown()`` or, when `honouringStop`, for ``stop()``.
    ///
    /// The inbox is taken after the clock is read, so work and timers other threads submitted
    /// before this tick are all due in it, in the order of their calls.
    ///
    /// - Returns: Whether any work ran.
    @discardableResult
    func runTick(honouringStop: Bool = true) -> Bool {
        // Diagnostics off: one relaxed load and one branch per tick (a monitored tick is a
        // separate function, so this path stays as it was).
        adoptMonitorSettingsIfChanged()
        if isMonitoring { return runMonitoredTick(honouringStop: honouringStop) }
        core.beginRound(at: currentTime())
        takeInbox()
        var remaining = Self.roundBudget
        var ran = false
        while let work = core.nextInRound() {
            ran = true
            perform(work)
            remaining -= 1
            if remaining == 0 || shutdownRequested || (honouringStop && stopRequested.load(ordering: .relaxed)) {
                core.endRound()
                break
            }
        }
        return ran
    }

    /// Runs one item of work, on the loop's thread, as every loop does
    /// (`LoopWork.run(asTaskExecutor:)`).
    @inline(__always)
    package func perform(_ work: LoopWork) {
        work.run(asTaskExecutor: asUnownedTaskExecutor())
    }

    /// Moves the work and timers other threads submitted into the core, after the work already
    /// there, in the order of their calls.
    func takeInbox() {
        var taken = spareInboxWork
        // The spare's only reference is `taken` now: shared with `spareInboxWork`, the buffer
        // swapped into the inbox would be copied by the producer's next append, one allocation
        // per drain (W6 counted up to 0.02 per submission, varying with how often the loop drains).
        spareInboxWork = []
        var timers: [InboxTimer] = []
        let phase = inbox.withLock { inbox -> LoopLifecycle.Phase in
            swap(&inbox.work, &taken)
            if !inbox.timers.isEmpty { swap(&inbox.timers, &timers) }
            // Producers may skip the wake-up from now on: the loop checks again before blocking.
            inbox.wakeupPending = true
            return inbox.lifecycle.phase
        }
        // Another thread's shutdown request reaches the driver here.
        if phase == .shutdownRequested && confinedPhase == .open { confinedPhase = .shutdownRequested }
        if timers.isEmpty {
            for work in taken { core.enqueue(work) }
        } else {
            // Each timer was requested after `position` submissions: arm it between them, so that
            // its sequence number, like theirs, records the order of the calls.
            var next = 0
            for (index, work) in taken.enumerated() {
                while next < timers.count && timers[next].position == index {
                    arm(timers[next])
                    next += 1
                }
                core.enqueue(work)
            }
            while next < timers.count {
                arm(timers[next])
                next += 1
            }
        }
        taken.removeAll(keepingCapacity: true)
        spareInboxWork = taken
    }

    /// Arms a timer another thread scheduled, unless it was cancelled meanwhile.
    private func arm(_ timer: InboxTimer) {
        guard timer.handle.isPending else { return }
        timer.handle.timerID = core.schedule(at: timer.deadline, timer.work)
    }

    /// Decides, under the inbox lock, whether the loop may block: only when no other thread has
    /// submitted work or asked for shutdown. When it may, producers must wake it again.
    func prepareToBlock() -> Bool {
        inbox.withLock { inbox -> Bool in
            guard inbox.work.isEmpty && inbox.timers.isEmpty && inbox.lifecycle.phase == .open else { return false }
            inbox.wakeupPending = false
            return true
        }
    }

    // MARK: The timer

    /// Has the backend wake the loop at the core's earliest timer deadline.
    @inline(__always)
    func armTimer() {
        backend.armTimer(for: core.nextTimerDeadline)
    }

    // MARK: Driving the loop

    /// Runs `body` as the loop's driver from inside one of the loop's libevent callbacks.
    ///
    /// Under ``run()``/``runUntilIdle()`` the calling thread already drives the loop and `body`
    /// just runs. When a host runs a borrowed base, the callback claims the driver role for its
    /// length, runs `body`, then drains what `body` made ready (a host does not tick for us) and
    /// re-arms the timer for the host's next wait.
    func withCallbackEntered(as identity: LoopWorkIdentity = .libeventCallback, _ body: () -> Void) {
        if inEventLoop {
            if isMonitoring {
                runMonitoredCallback(as: identity, body)
            } else {
                body()
            }
            return
        }
        switch tryClaimDriver(for: .drive) {
        case .claimed:
            break
        case .refused(.closed):
            // The loop's events are freed at shutdown; nothing of it can still be called.
            return
        case .refused(.drivenByCaller), .refused(.drivenByAnotherThread), .refused(.visitedByAnotherThread):
            preconditionFailure(
                "EventLoop: the host ran a borrowed event_base on a second thread while another thread drives the loop; run a base on one thread at a time"
            )
        }
        defer { releaseDriver() }
        ExecutionFlags.running(on: self) {
            if isMonitoring {
                runMonitoredCallback(as: identity, body)
            } else {
                body()
            }
            repeat {
                // A host's loop has no run() to return from, so stop() does not cut a tick short.
                runTick(honouringStop: false)
                if shutdownRequested {
                    tearDownAsRequested()
                    return
                }
            } while core.readyCount == 0 && !prepareToBlock()
            if core.readyCount > 0 {
                // The round's budget ran out: let the host poll its descriptors, then call back.
                backend.requestAnotherTurn()
            }
            armTimer()
        }
    }
}
