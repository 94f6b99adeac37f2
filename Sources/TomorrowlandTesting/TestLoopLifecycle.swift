/// The lifecycle of a ``TestLoop``: whether a call drives it, and how far shutdown has got.
///
/// A pure value, kept under the loop's lock: each transition checks the state it starts from,
/// moves to the next one and returns what the caller must do after unlocking (drive, tear down,
/// refuse work). It follows `EventLoop`'s lifecycle, with "a call drives the loop" where the
/// event loop has "a thread drives the loop".
///
/// | from | event | to | the caller then |
/// |---|---|---|---|
/// | open, undriven | ``claim()`` | open, driven | drives the loop |
/// | open, driven | ``release()`` | open, undriven | — |
/// | open, undriven | ``requestShutdown()`` | shutting down, driven by the caller | tears down |
/// | open, driven | ``requestShutdown()`` | shutdown requested | — (the driver tears down after its item) |
/// | shutdown requested | ``beginRequestedTeardown()`` or ``release()`` | shutting down | tears down |
/// | shutting down | ``finishTeardown()`` | closed, undriven | refuses work from now on |
///
/// Invariants: a loop that is not ``Phase/open`` is driven until it is ``Phase/closed``, and a
/// closed loop is not driven. Work is admitted in every phase but ``Phase/closed``.
struct TestLoopLifecycle: Equatable, Sendable {
    /// How far shutdown has got.
    enum Phase: Equatable, Sendable {
        /// Accepts work and driving calls.
        case open
        /// Shutdown was asked for while a call drives the loop: that call tears the loop down
        /// when the item in progress ends.
        case shutdownRequested
        /// The driving call tears the loop down: timers are released, ready work is drained.
        /// Work is still accepted, and drained.
        case shuttingDown
        /// Shut down for good: nothing is pending, work is refused, driving calls return at once.
        case closed
    }

    /// What ``claim()`` decided.
    enum ClaimOutcome: Equatable, Sendable {
        /// The caller drives the loop until it calls ``release()``.
        case claimed
        /// A call drives the loop already (this one's own work, or another thread).
        case alreadyDriven
        /// The loop was shut down: the caller does nothing.
        case closed
    }

    /// What the caller of ``requestShutdown()`` must do.
    enum ShutdownAction: Equatable, Sendable {
        /// The loop was undriven: the caller now drives it, tears it down, and calls
        /// ``finishTeardown()``.
        case tearDownNow
        /// A call drives the loop: it tears the loop down after the item in progress.
        case driverTearsDown
        /// Shutdown was asked for already, or is done.
        case none
    }

    private(set) var phase = Phase.open
    /// Whether a driving call (or a teardown) is in progress, on any thread.
    private(set) var isDriven = false

    /// Whether work submitted now is taken (to run, or to be drained by shutdown).
    var admitsWork: Bool {
        phase != .closed
    }

    /// A driving call (`run()`, `advance`, `runAll`, `run(until:)`) asks to drive the loop.
    mutating func claim() -> ClaimOutcome {
        if phase == .closed { return .closed }
        if isDriven { return .alreadyDriven }
        isDriven = true
        return .claimed
    }

    /// The driving call ends.
    ///
    /// - Returns: Whether the caller must tear the loop down first (shutdown was asked for from
    ///   another thread after the caller last looked); it is still the driver then.
    mutating func release() -> Bool {
        switch phase {
        case .closed:
            return false
        case .open:
            isDriven = false
            return false
        case .shutdownRequested:
            phase = .shuttingDown
            return true
        case .shuttingDown:
            preconditionFailure("TestLoopLifecycle: the driver released the loop in the middle of its teardown")
        }
    }

    /// `shutdown()` is called.
    mutating func requestShutdown() -> ShutdownAction {
        guard phase == .open else { return .none }
        if isDriven {
            phase = .shutdownRequested
            return .driverTearsDown
        }
        isDriven = true
        phase = .shuttingDown
        return .tearDownNow
    }

    /// The driver, between two items, asks whether to tear down now.
    ///
    /// - Returns: Whether shutdown was requested; the phase is ``Phase/shuttingDown`` then.
    mutating func beginRequestedTeardown() -> Bool {
        guard phase == .shutdownRequested else { return false }
        phase = .shuttingDown
        return true
    }

    /// The driver has torn the loop down: it is closed, and undriven.
    mutating func finishTeardown() {
        precondition(phase == .shuttingDown, "TestLoopLifecycle: teardown finished without having begun")
        phase = .closed
        isDriven = false
    }
}
