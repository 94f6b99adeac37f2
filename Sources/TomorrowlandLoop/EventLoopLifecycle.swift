/// The lifecycle of an ``EventLoop`` as every thread sees it: which thread drives the loop, and how
/// far shutdown has got.
///
/// A pure value: each transition checks the state it starts from, moves to the next one and
/// returns what the caller must do; it never touches the loop. The loop keeps it under its inbox
/// lock and performs the returned action after unlocking (tearing down, waking the driver,
/// refusing work), so that every driver hand-off and every shutdown request goes through these
/// few functions, and `EventLoopLifecycleTests` can check every state against every event
/// without libevent.
///
/// | from | event | to | the caller then |
/// |---|---|---|---|
/// | open, undriven | ``claim(by:)`` | open, driven | drives the loop |
/// | open, driven | ``release(by:)`` | open, undriven | — |
/// | open, undriven | ``requestShutdown(by:)`` | shutting down, driven by the caller | tears down |
/// | open, driven by the caller | ``requestShutdown(by:)`` | shutdown requested | tears down after its task |
/// | open, driven by another thread | ``requestShutdown(by:)`` | shutdown requested | wakes the driver |
/// | shutdown requested | ``release(by:)`` or ``beginTeardown(by:)`` | shutting down | tears down |
/// | shutting down | ``finishTeardown(by:)`` | closed | refuses work from now on |
///
/// Invariants: a loop that is not ``Phase/open`` has a driver until it is ``Phase/closed``, and a
/// closed loop has none. Work is admitted in every phase but ``Phase/closed``: what arrives while
/// the loop shuts down is drained; what arrives after is refused (see ``EventLoop/shutdown()``).
struct EventLoopLifecycle: Equatable, Sendable {
    /// A thread, as its `pthread_t` bit pattern.
    typealias ThreadID = UInt

    /// How far shutdown has got.
    enum Phase: Equatable, Sendable, CaseIterable {
        /// Running or idle; accepts work and drivers.
        case open
        /// Shutdown was asked for while a thread drives the loop: that thread tears the loop down
        /// when its current task (or drive step) ends.
        case shutdownRequested
        /// The driver is tearing the loop down: watchers and timers are cancelled, ready work is
        /// drained. Work is still accepted, and drained.
        case shuttingDown
        /// Shut down for good: no driver, no work.
        case closed
    }

    /// Why a thread holds the driver role.
    enum Role: Equatable, Sendable, CaseIterable {
        /// To drive the loop until it stops: ``EventLoop/run()``, ``EventLoop/runUntilIdle()``,
        /// ``EventLoop/run(until:)``, a group's thread, a libevent callback of a borrowed base.
        case drive
        /// For one short piece of loop work on an idle loop, from whatever thread asked for it: a
        /// hop that finds no driver, a watcher registration, a shutdown of an undriven loop. A
        /// thread that wants to drive waits for a visit to end instead of failing.
        case visit
    }

    /// Why a thread could not become the loop's driver.
    enum Refusal: Equatable, Sendable {
        /// Another thread drives the loop (or is shutting it down).
        case drivenByAnotherThread
        /// Another thread holds the loop for a visit, which ends soon.
        case visitedByAnotherThread
        /// The calling thread drives the loop already: it is inside the loop's own work.
        case drivenByCaller
        /// The loop was shut down.
        case closed
    }

    /// What ``claim(by:)`` decided.
    enum ClaimOutcome: Equatable, Sendable {
        /// The caller drives the loop until it calls ``release(by:)``.
        case claimed
        /// The caller does not drive the loop.
        case refused(Refusal)
    }

    /// What the driver must do after ``release(by:)``.
    enum ReleaseAction: Equatable, Sendable {
        /// Nothing: the loop is undriven.
        case released
        /// Shutdown was asked for meanwhile: the caller is still the driver and must tear the loop
        /// down (the phase is now ``Phase/shuttingDown``), then call ``finishTeardown(by:)``.
        case tearDown
        /// The caller's drive ended with the loop closed (it tore the loop down itself): nothing.
        case alreadyClosed
    }

    /// What the caller of ``requestShutdown(by:)`` must do.
    enum ShutdownAction: Equatable, Sendable {
        /// The loop was undriven: the caller is now its driver and must tear it down, then call
        /// ``finishTeardown(by:)``.
        case tearDownNow
        /// The caller drives the loop (it asked from inside the loop's work): tear down when the
        /// current task ends, with ``beginTeardown(by:)``.
        case tearDownAfterCurrentTask
        /// Another thread drives the loop: wake it, so that it notices the request.
        case wakeDriver
        /// Shutdown was asked for already (or is done): nothing.
        case none
    }

    /// How far shutdown has got.
    private(set) var phase: Phase = .open
    /// The driving thread; nil when no thread drives the loop.
    private(set) var driver: ThreadID?
    /// Why ``driver`` holds the loop; meaningless while it is nil.
    private(set) var role: Role

    /// A lifecycle in `phase` held by `driver` in `role`, for tests that start from any state.
    init(phase: Phase = .open, driver: ThreadID? = nil, role: Role = .drive) {
        self.phase = phase
        self.driver = driver
        self.role = driver == nil ? .drive : role
    }

    /// Whether work submitted now is taken (and will run, or be drained by shutdown).
    var admitsWork: Bool {
        phase != .closed
    }

    /// `thread` asks to drive the loop (``EventLoop/run()``, ``EventLoop/runUntilIdle()``, a hop
    /// onto an undriven loop, a watcher registration, a libevent callback of a borrowed base).
    ///
    /// The one driver-claim primitive: whoever drives the loop got there through this.
    mutating func claim(by thread: ThreadID, for role: Role) -> ClaimOutcome {
        if phase == .closed { return .refused(.closed) }
        if let driver {
            if driver == thread { return .refused(.drivenByCaller) }
            return .refused(self.role == .visit ? .visitedByAnotherThread : .drivenByAnotherThread)
        }
        // Every phase past `.open` has a driver until it is closed.
        precondition(phase == .open, "EventLoopLifecycle: an undriven loop in phase \(phase)")
        driver = thread
        self.role = role
        return .claimed
    }

    /// `thread`, the driver, gives the loop up.
    mutating func release(by thread: ThreadID) -> ReleaseAction {
        if phase == .closed { return .alreadyClosed }
        precondition(driver == thread, "EventLoopLifecycle: release by a thread that does not drive the loop")
        switch phase {
        case .open:
            driver = nil
            role = .drive
            return .released
        case .shutdownRequested:
            phase = .shuttingDown
            return .tearDown
        case .shuttingDown:
            preconditionFailure("EventLoopLifecycle: the driver released the loop in the middle of its teardown")
        case .closed:
            return .alreadyClosed
        }
    }

    /// `thread` asks for shutdown (``EventLoop/shutdown()``).
    mutating func requestShutdown(by thread: ThreadID) -> ShutdownAction {
        guard phase == .open else { return .none }
        guard let driver else {
            self.driver = thread
            role = .visit
            phase = .shuttingDown
            return .tearDownNow
        }
        phase = .shutdownRequested
        return driver == thread ? .tearDownAfterCurrentTask : .wakeDriver
    }

    /// The driver, between two tasks, starts the teardown that was requested.
    mutating func beginTeardown(by thread: ThreadID) {
        precondition(
            phase == .shutdownRequested && driver == thread,
            "EventLoopLifecycle: teardown begun without a request, or by a thread that does not drive the loop")
        phase = .shuttingDown
    }

    /// The driver has torn the loop down: it is closed, and undriven.
    mutating func finishTeardown(by thread: ThreadID) {
        precondition(
            phase == .shuttingDown && driver == thread,
            "EventLoopLifecycle: teardown finished without having begun, or by a thread that does not drive the loop")
        phase = .closed
        driver = nil
        role = .drive
    }

    /// The loop is being destroyed without a shutdown (its `deinit`): closed, whatever it was.
    mutating func closeWithoutTeardown() {
        phase = .closed
        driver = nil
        role = .drive
    }
}
