import CLibevent
import Synchronization
import Tomorrowland

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
    /// 2. **Pending timers** are cancelled without running: their work is released, so
    ///    ``sleep(for:)`` promises are cancelled, and so is any promise whose storage only that
    ///    work kept alive. Cancelling their handles afterwards does nothing.
    /// 3. **Ready work runs**: everything already submitted, from any thread, and what that work
    ///    submits, in FIFO order, in rounds, for at most 1000 rounds. Timers scheduled meanwhile
    ///    are cancelled as in step 2.
    /// 4. The loop **closes**: from now on ``execute(_:)`` and ``schedule(after:_:)`` are
    ///    precondition failures. Work that still arrived during step 3's last round (or past the
    ///    round limit) is released without running (a Swift Concurrency job released this way
    ///    never resumes its task: shut a loop down only after the tasks that prefer it are done).
    /// 5. libevent objects are freed in dependency order (events, then the base if the loop owns
    ///    it); a borrowed base is left to its owner. The loop gives up signal ownership.
    ///
    /// Where it happens: called from inside the loop's work, the loop finishes the task in
    /// progress, shuts down on its own thread, and the ``run()`` in progress returns. Called from
    /// another thread while a thread drives the loop, it asks that thread to shut down and returns
    /// at once (the driver's ``run()`` returns when done). Called when no thread drives the loop,
    /// it shuts down on the calling thread before returning. Calling it again does nothing.
    ///
    /// - Important: For a borrowed base that a host is running, call this on the host's loop
    ///   thread (inside the loop's work), never from another thread while the host runs the base.
    public func shutdown() {
        if inEventLoop {
            shutdownRequested = true
            return
        }
        // Set the request and read the driver under the inbox lock: `releaseDriver()` checks for
        // the request under the same lock before it lets go, so either the driver sees the
        // request, or this thread sees that no one drives the loop.
        let holder = inbox.withLock { inbox -> UInt in
            inbox.shutdownRequested = true
            return driver.load(ordering: .acquiring)
        }
        if holder == Self.closedMarker { return }
        if holder != 0 {
            wakeUp()
            return
        }
        let me = UInt(pthread_self())
        let (exchanged, _) = driver.compareExchange(expected: 0, desired: me, ordering: .acquiring)
        // If another thread started driving the loop meanwhile, its first tick sees the request.
        guard exchanged else { return }
        defer { releaseDriver() }
        ExecutionFlags.running(on: self) { tearDown() }
    }

    /// Whether ``shutdown()`` has completed.
    ///
    /// Safe from any thread.
    public var isShutdownComplete: Bool {
        driver.load(ordering: .acquiring) == Self.closedMarker
    }

    /// Performs shutdown on the loop's thread (steps 1 to 5 of ``shutdown()``).
    func tearDown() {
        precondition(!isShutDown)
        isShuttingDown = true
        shutdownRequested = false

        cancelAllWatchers()
        closeAllResources()
        for _ in 0..<Self.shutdownDrainRounds {
            core.removeAllTimers()
            takeInbox()
            let count = core.readyCount
            if count == 0 { break }
            for _ in 0..<count {
                // Timers are removed before each pop, so a pop only ever yields ready work.
                guard let work = core.popNext(until: core.currentTime) else { break }
                perform(work)
                if core.timerCount > 0 { core.removeAllTimers() }
            }
        }

        var leftovers: [LoopWork] = []
        inbox.withLock { inbox in
            inbox.isClosed = true
            swap(&inbox.work, &leftovers)
        }
        // Released outside the lock: releasing work runs deinitializers, which may submit.
        leftovers.removeAll()
        spareInboxWork = []
        core.removeAllTimers()
        core.removeAllReady()

        freeLibeventObjects()
        isShutDown = true
    }

    /// What `deinit` does for a loop that was never shut down: release everything, run nothing.
    func releaseEverythingWithoutRunning() {
        isShuttingDown = true
        cancelAllWatchers()
        inbox.withLock { inbox in
            inbox.isClosed = true
            inbox.work.removeAll()
        }
        core.removeAllTimers()
        core.removeAllReady()
        freeLibeventObjects()
        isShutDown = true
    }

    /// Frees the loop's own events, then the base if the loop owns it, in the order libevent
    /// requires (`event_base_free` does not free events, and `event_free` after it is a
    /// use-after-free), and gives up signal ownership.
    private func freeLibeventObjects() {
        if let mainQueueEvent { event_free(mainQueueEvent) }
        mainQueueEvent = nil
        if let timerEvent { event_free(timerEvent) }
        timerEvent = nil
        armedDeadline = nil
        if let wakeupEvent { event_free(wakeupEvent) }
        wakeupEvent = nil
        if ownsBase { event_base_free(base) }
        SignalOwnership.release(by: self)
    }
}
