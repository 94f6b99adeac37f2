#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lifecycle of a loop (`EventLoop`, `TestLoop`) as every thread sees it: which thread drives
/// the loop, and how far shutdown has got.
///
/// A pure value, kept under the loop's lock: each transition checks the state it starts from,
/// moves to the next one and returns what the caller must do after unlocking (drive, tear down,
/// wake the driver, refuse work); it never touches the loop. Every driver hand-off and every
/// shutdown request goes through these few functions, so `LoopLifecycleTests` can check every
/// state against every event without a loop.
///
/// | from | event | to | the caller then |
/// |---|---|---|---|
/// | open, undriven | ``claim(by:for:)`` | open, driven | drives the loop |
/// | open, driven | ``release(by:)`` | open, undriven | — |
/// | open, undriven | ``requestShutdown(by:)`` | shutting down, visited by the caller | tears down |
/// | open, driven by the caller | ``requestShutdown(by:)`` | shutdown requested | tears down after its task |
/// | open, driven by another thread | ``requestShutdown(by:)`` | shutdown requested | wakes the driver |
/// | shutdown requested | ``release(by:)`` or ``beginRequestedTeardown(by:)`` | shutting down | tears down |
/// | shutting down | ``finishTeardown(by:)`` | closed | refuses work from now on |
///
/// The invariants are the shape of the cases: a loop past ``open(_:)`` has a driver until it is
/// ``closed``, and a closed loop has none. Work is admitted in every phase but
/// ``Phase/closed``: what arrives while the loop shuts down is drained; what arrives after is
/// refused.
///
/// `@usableFromInline` (with its nested types): the loops compare ``Phase`` and read ``phase`` and
/// ``admitsWork`` from another module on their submit paths, and compare the transitions'
/// actions; only then does the optimizer inline those comparisons and readings there.
@usableFromInline
package enum LoopLifecycle: Equatable, Sendable {
    /// A thread, as its `pthread_t` bit pattern.
    @usableFromInline package typealias ThreadID = UInt

    /// Why a thread holds the loop.
    @usableFromInline
    package enum Role: Equatable, Sendable, CaseIterable {
        /// To drive the loop until it stops: `EventLoop.run()`, `runUntilIdle()`, `run(until:)`,
        /// a group's thread, a libevent callback of a borrowed base; a `TestLoop`'s driving call.
        case drive
        /// For one short piece of loop work on an idle loop, from whatever thread asked for it: a
        /// hop that finds no driver, a watcher registration, a shutdown of an undriven loop. A
        /// thread that wants to drive an `EventLoop` waits for a visit to end instead of failing.
        case visit
    }

    /// The thread that holds the loop, and why.
    @usableFromInline
    package struct Driver: Equatable, Sendable {
        /// The holding thread.
        package var thread: ThreadID
        /// Why it holds the loop.
        package var role: Role

        /// `thread` holding the loop in `role`.
        package init(thread: ThreadID, role: Role) {
            self.thread = thread
            self.role = role
        }
    }

    /// Running or idle; accepts work and drivers. Nil when no thread holds the loop.
    case open(Driver?)
    /// Shutdown was asked for while a thread holds the loop: that thread tears the loop down when
    /// its current task (or drive step) ends.
    case shutdownRequested(Driver)
    /// The driver is tearing the loop down: timers and watchers are released, ready work is
    /// drained. Work is still accepted, and drained.
    case shuttingDown(Driver)
    /// Shut down for good: no driver, no work.
    case closed

    /// How far shutdown has got, without the driver: what `EventLoop` keeps a copy of for its
    /// thread, compared on its hot path without the lock.
    @usableFromInline
    package enum Phase: Equatable, Sendable, CaseIterable {
        /// ``LoopLifecycle/open(_:)``.
        case open
        /// ``LoopLifecycle/shutdownRequested(_:)``.
        case shutdownRequested
        /// ``LoopLifecycle/shuttingDown(_:)``.
        case shuttingDown
        /// ``LoopLifecycle/closed``.
        case closed
    }

    /// Why a thread could not become the loop's driver.
    @usableFromInline
    package enum Refusal: Equatable, Sendable {
        /// Another thread drives the loop (or is shutting it down).
        case drivenByAnotherThread
        /// Another thread holds the loop for a visit, which ends soon.
        case visitedByAnotherThread
        /// The calling thread holds the loop already: it is inside the loop's own work.
        case drivenByCaller
        /// The loop was shut down.
        case closed
    }

    /// What ``claim(by:for:)`` decided.
    @usableFromInline
    package enum ClaimOutcome: Equatable, Sendable {
        /// The caller drives the loop until it calls ``release(by:)``.
        case claimed
        /// The caller does not drive the loop.
        case refused(Refusal)
    }

    /// What the driver must do after ``release(by:)``.
    @usableFromInline
    package enum ReleaseAction: Equatable, Sendable {
        /// Nothing: the loop is undriven.
        case released
        /// Shutdown was asked for meanwhile: the caller is still the driver and must tear the loop
        /// down (the phase is now ``Phase/shuttingDown``), then call ``finishTeardown(by:)``.
        case tearDown
        /// The caller's drive ended with the loop closed (it tore the loop down itself): nothing.
        case alreadyClosed
    }

    /// What the caller of ``requestShutdown(by:)`` must do.
    @usableFromInline
    package enum ShutdownAction: Equatable, Sendable {
        /// The loop was undriven: the caller now holds it and must tear it down, then call
        /// ``finishTeardown(by:)``.
        case tearDownNow
        /// The caller drives the loop (it asked from inside the loop's work): tear down when the
        /// current task ends, with ``beginRequestedTeardown(by:)``.
        case tearDownAfterCurrentTask
        /// Another thread drives the loop: wake it, so that it notices the request.
        case wakeDriver
        /// Shutdown was asked for already (or is done): nothing.
        case none
    }

    /// The calling thread, as the lifecycle names threads.
    @inlinable
    package static var currentThread: ThreadID {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }

    /// An open loop that no thread holds.
    package init() {
        self = .open(nil)
    }

    /// How far shutdown has got.
    @inlinable
    package var phase: Phase {
        switch self {
        case .open: .open
        case .shutdownRequested: .shutdownRequested
        case .shuttingDown: .shuttingDown
        case .closed: .closed
        }
    }

    /// The thread that holds the loop, and why; nil when none does.
    package var driver: Driver? {
        switch self {
        case .open(let driver): driver
        case .shutdownRequested(let driver), .shuttingDown(let driver): driver
        case .closed: nil
        }
    }

    /// Whether work submitted now is taken (and will run, or be drained by shutdown).
    @inlinable
    package var admitsWork: Bool {
        if case .closed = self { false } else { true }
    }

    /// `thread` asks to hold the loop in `role`: the one driver-claim primitive, whoever drives
    /// the loop got there through this.
    package mutating func claim(by thread: ThreadID, for role: Role) -> ClaimOutcome {
        guard let driver else {
            if case .closed = self { return .refused(.closed) }
            self = .open(Driver(thread: thread, role: role))
            return .claimed
        }
        if driver.thread == thread { return .refused(.drivenByCaller) }
        return .refused(driver.role == .visit ? .visitedByAnotherThread : .drivenByAnotherThread)
    }

    /// `thread`, the driver, gives the loop up.
    package mutating func release(by thread: ThreadID) -> ReleaseAction {
        if case .closed = self { return .alreadyClosed }
        precondition(driver?.thread == thread, "LoopLifecycle: release by a thread that does not drive the loop")
        switch self {
        case .open:
            self = .open(nil)
            return .released
        case .shutdownRequested(let driver):
            self = .shuttingDown(driver)
            return .tearDown
        case .shuttingDown:
            preconditionFailure("LoopLifecycle: the driver released the loop in the middle of its teardown")
        case .closed:
            return .alreadyClosed
        }
    }

    /// `thread` asks for shutdown.
    package mutating func requestShutdown(by thread: ThreadID) -> ShutdownAction {
        guard case .open(let driver) = self else { return .none }
        guard let driver else {
            self = .shuttingDown(Driver(thread: thread, role: .visit))
            return .tearDownNow
        }
        self = .shutdownRequested(driver)
        return driver.thread == thread ? .tearDownAfterCurrentTask : .wakeDriver
    }

    /// The driver, between two tasks, starts the teardown that was requested, if one was.
    ///
    /// - Returns: Whether shutdown was requested; the phase is ``Phase/shuttingDown`` then.
    package mutating func beginRequestedTeardown(by thread: ThreadID) -> Bool {
        guard case .shutdownRequested(let driver) = self else { return false }
        precondition(driver.thread == thread, "LoopLifecycle: teardown begun by a thread that does not drive the loop")
        self = .shuttingDown(driver)
        return true
    }

    /// The driver has torn the loop down: it is closed, and undriven.
    package mutating func finishTeardown(by thread: ThreadID) {
        guard case .shuttingDown(let driver) = self, driver.thread == thread else {
            preconditionFailure(
                "LoopLifecycle: teardown finished without having begun, or by a thread that does not drive the loop")
        }
        self = .closed
    }

    /// The loop is being destroyed without a shutdown (an `EventLoop`'s `deinit`): closed,
    /// whatever it was.
    package mutating func closeWithoutTeardown() {
        self = .closed
    }
}
