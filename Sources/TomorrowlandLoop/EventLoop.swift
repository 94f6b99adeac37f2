import CLibevent
import Synchronization
import Tomorrowland
internal import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// A single-threaded event loop on a libevent `event_base`: it runs submitted work in FIFO order,
/// timers in deadline order, I/O readiness and signal watchers, all on the one thread that drives
/// it.
///
/// Drive a loop with ``run()`` (blocks until ``stop()``), ``run(until:)``, ``runUntilIdle()``, or,
/// for a loop made with ``init(borrowing:)``, by running the host's `event_base`. One thread at a
/// time drives a loop; every other entry point (``execute(_:)``, ``stop()``,
/// ``schedule(after:_:)``, ``shutdown()``) is safe from any thread.
///
/// ## Submitting work
///
/// Work submitted from another thread goes to a lock-protected queue and wakes the loop with one
/// `eventfd` write per burst. Work submitted from the loop's own thread while it runs goes to the
/// loop's local FIFO (no lock, no wake-up) and runs after the task in progress, in the same tick,
/// never re-entrantly. Ready work and timers share one scheduling core ordered by
/// (deadline, sequence), the same one `TestLoop` uses.
///
/// ## Lifecycle
///
/// - ``stop()`` pauses: ``run()`` returns after the task in progress, and everything pending stays
///   pending (it runs the next time the loop is driven).
/// - ``shutdown()`` ends the loop for good; see its documentation for what happens to pending
///   work, timers and watchers, and to work that arrives after it (late work never crashes: a
///   promise callback aimed at a shut-down loop is not run and its promise ends cancelled,
///   ``execute(_:)`` returns false, timers come back cancelled).
///
/// - Important: A loop made with ``init()`` uses `EVENT_BASE_FLAG_NOLOCK`: libevent's own locking
///   is off, and this type never touches the `event_base` from a thread that does not drive it.
public final class EventLoop: @unchecked Sendable {
    // Thread-safety: this class is `@unchecked Sendable` because it splits its state in two.
    // - Shared state (`inbox`, which holds the lifecycle, `stopRequested`, `lateWork`,
    //   and the immutable `backend`, whose any-thread members are safe) is safe from any thread.
    // - Everything else is loop-confined: touched only by the thread the lifecycle names as the
    //   driver (the thread running `run()`/`runUntilIdle()`/`shutdown()`, or a host thread inside
    //   one of our libevent callbacks). The driver role is claimed and given up under the inbox
    //   lock, whose acquire/release hands the loop-confined state from one driver to the next.
    // LoopInvariants: "Loop confinement" states this rule for the whole module.

    /// What runs under the loop: its clock, wake-up, waiting, watchers and sockets (see
    /// ``EventLoopBackend``); libevent for every loop made with a public initializer.
    let backend: EventLoopBackendCarrier

    /// Work from other threads, and the lifecycle (who drives the loop, how far shutdown got).
    let inbox = LockedValue(Inbox())
    /// Set by ``stop()``; consumed by the ``run()`` it ends.
    let stopRequested = Atomic<Bool>(false)
    /// What happens to work that reaches the loop after its shutdown.
    let lateWork = LateWorkRefusal(loopKind: "EventLoop")
    /// Tick statistics and stall detection, off until the user turns them on.
    let monitor = EventLoop.makeMonitor()

    // MARK: Loop-confined state
    //
    // `@exclusivity(unchecked)`: only the driving thread touches these, never with overlapping
    // accesses, and the dynamic exclusivity check showed up in profiles of the submit path.
    // LoopInvariants: "Loop confinement": one thread at a time, no `inout` across user code.

    /// Ready work and timers, ordered by (deadline, sequence).
    let core: SchedulingCore
    /// The array swapped with the inbox's, so that taking the inbox allocates nothing.
    @exclusivity(unchecked) var spareInboxWork: [LoopWork] = []
    /// Live watchers, keeping the objects libevent's callback arguments point to alive.
    @exclusivity(unchecked) var watchers: [ObjectIdentifier: EventLoopWatcher] = [:]
    /// Live TCP listeners, connections and connection attempts, keeping the objects their
    /// libevent callback arguments point to alive (see ``EventLoopResource``).
    @exclusivity(unchecked) var resources: [ObjectIdentifier: RegisteredResource] = [:]
    /// The order of the last registration in ``resources``.
    @exclusivity(unchecked) var nextResourceOrder: UInt64 = 0
    /// The driver's copy of the lifecycle's phase, read on the hot path without the lock. It
    /// trails the shared phase: a request from another thread reaches it when the driver next
    /// takes the inbox (or gives the loop up).
    @exclusivity(unchecked) var confinedPhase = LoopLifecycle.Phase.open
    /// Whether tick statistics or stall detection is on, as of the current tick (the driver's
    /// copy of ``monitor``'s settings).
    @exclusivity(unchecked) var isMonitoring = false
    /// Shutdown was asked for and happens when the current drive step ends.
    var shutdownRequested: Bool { confinedPhase == .shutdownRequested }
    /// Shutdown has started (or completed): the loop drains, and accepts no new watchers,
    /// listeners or connections.
    var isShuttingDown: Bool { confinedPhase == .shuttingDown || confinedPhase == .closed }
    /// Shutdown completed: every libevent object of this loop is freed, and work is refused.
    var isShutDown: Bool { confinedPhase == .closed }

    /// Creates a loop on an `event_base` of its own.
    ///
    /// The base is created through an `event_config` with `EVENT_BASE_FLAG_NOLOCK` (the loop never
    /// shares it between threads) and `EVENT_BASE_FLAG_PRECISE_TIMER` (libevent otherwise waits on
    /// a coarse clock with millisecond granularity). The loop frees it at ``shutdown()``.
    public convenience init() {
        guard let config = event_config_new() else {
            fatalError("EventLoop: event_config_new failed (out of memory)")
        }
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_NOLOCK.rawValue))
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_PRECISE_TIMER.rawValue))
        let base = event_base_new_with_config(config)
        event_config_free(config)
        guard let base else {
            fatalError("EventLoop: event_base_new_with_config failed (no usable backend or out of descriptors)")
        }
        self.init(libevent: LibeventBackend(owning: base))
    }

    /// Wraps an `event_base` that the host program owns and runs.
    ///
    /// The loop adds its events (a wake-up `eventfd` and one timer) to `base`. Promise work,
    /// timers and watchers of this loop then run on the host's loop thread, inside libevent
    /// callbacks, whenever the host runs its base (`event_base_dispatch`, `event_base_loop`); they
    /// also run under ``run()`` or ``runUntilIdle()`` if the host lets this loop drive the base.
    ///
    /// The loop never frees `base`. Before the host frees it, call ``shutdown()`` on the host's loop
    /// thread (inside the loop's work, or while the host is not running the base), which removes
    /// the loop's events.
    ///
    /// A loop released without ``shutdown()`` may go on any thread, even while the host runs
    /// `base`: its work is dropped unrun (as for any loop released so), and it touches nothing of
    /// `base` on that thread. It hands its events (and its watchers') to the host's thread, and
    /// they are freed there, in the loop's wake-up callback, the next time the host runs `base`.
    /// Until then they stay on `base`, so a host that frees `base` without running it again
    /// leaks them (and one `eventfd`): call ``shutdown()`` first.
    ///
    /// - Important: Create the loop on the thread that runs `base`, or while nothing runs it:
    ///   libevent objects are not thread-safe without `evthread`, which this library never
    ///   enables.
    /// - Parameter base: A live `struct event_base *`.
    public convenience init(borrowing base: OpaquePointer) {
        self.init(libevent: LibeventBackend(borrowing: base))
    }

    private init(libevent: LibeventBackend) {
        backend = .libevent(libevent)
        core = SchedulingCore(currentTime: libevent.now)
        libevent.install(for: self)
    }

    /// Creates a loop on `backend`, which drives it from outside (module TomorrowlandSimulation's
    /// simulated hosts): it runs the loop's turns and callbacks with ``runTurn()`` and
    /// ``runCallback(_:)`` when it picks the loop's next event (``nextEventTime()``).
    package init(backend: any EventLoopBackend) {
        self.backend = .external(backend)
        core = SchedulingCore(currentTime: backend.now)
    }

    deinit {
        // Under the inbox lock: the last driver (a host's thread, perhaps) gave the loop up under
        // it, so from here on the loop-confined state is this thread's.
        // LoopInvariants: "Loop confinement".
        let wasShutDown = inbox.withLock { $0.lifecycle.phase == .closed }
        // A loop that was never shut down releases what it holds without running anything: its
        // work may refer to the loop, which is already being destroyed.
        if !wasShutDown { releaseEverythingWithoutRunning() }
    }

    /// Whether the calling thread is driving this loop right now (running its work, or inside one
    /// of its libevent callbacks).
    ///
    /// Exact: one thread-local read and a compare.
    public var inEventLoop: Bool {
        ExecutionFlags.isRunning(on: self)
    }

    /// Runs `work` on the loop's thread, soon, in submission order.
    ///
    /// Never runs `work` inside this call. From the loop's own thread, `work` joins the local FIFO
    /// and runs after the task in progress, in the same tick; from another thread it is queued
    /// under a lock and wakes the loop (one `eventfd` write per burst of submissions).
    ///
    /// Work submitted while the loop shuts down still runs (shutdown drains it). Work submitted
    /// after the loop was shut down does not run: this returns `false`, `work` is released on the
    /// calling thread, and the loop writes one diagnostic line to standard error (once per loop).
    /// A late submission is a race every daemon has, not a programming error, so it never traps.
    ///
    /// - Parameter work: The closure to run, on the loop's thread.
    /// - Returns: Whether the loop took `work`: `false` only after ``shutdown()`` completed.
    @preconcurrency
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        enqueue(.closure(work))
    }

    /// Makes ``run()`` return once the task in progress ends; everything still pending stays
    /// pending.
    ///
    /// Safe from any thread and from inside the loop's own work. The request is sticky: if no
    /// ``run()`` is in progress, the next one returns after its first tick. A host that runs a
    /// borrowed base itself is not stopped (stop the host's base instead); the request then
    /// waits for the next ``run()``. ``run(until:)`` ignores it.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        if !inEventLoop {
            // Always write, not only when no wake-up is pending: the loop may be between reading
            // `stopRequested` and blocking, and must not sleep through this request.
            wakeUp()
        }
    }

    // MARK: Submission internals

    /// Queues `work`: into the core when called on the loop, into the inbox otherwise. After
    /// shutdown, refuses it with ``refuseLateWork(_:)`` and returns false.
    ///
    /// Always inlined: on the loop's own thread (every hop of a chain on the loop) the whole
    /// path is a thread-local compare, a phase test and the core's inlined append.
    @discardableResult
    @inline(__always)
    func enqueue(_ work: consuming LoopWork) -> Bool {
        if inEventLoop {
            guard confinedPhase != .closed else {
                refuseLateWork(work)
                return false
            }
            core.enqueue(consume work)
            return true
        }
        return enqueueIntoInbox(work)
    }

    /// Queues `work` from a thread that does not drive the loop: into the inbox, waking the
    /// loop unless a wake-up is already pending. After shutdown, refuses it and returns false.
    private func enqueueIntoInbox(_ work: LoopWork) -> Bool {
        guard appendToInbox({ $0.work.append(work) }) else {
            refuseLateWork(work)
            return false
        }
        return true
    }

    /// Hands a timer scheduled from a thread that does not drive the loop to the inbox, waking
    /// the loop unless a wake-up is already pending. Returns false after shutdown (the timer is
    /// not kept then).
    func enqueueTimerIntoInbox(_ handle: EventLoopScheduledWork, deadline: UInt64, _ work: LoopWork) -> Bool {
        appendToInbox { inbox in
            inbox.timers.append(InboxTimer(position: inbox.work.count, handle: handle, deadline: deadline, work: work))
        }
    }

    /// Runs `append` on the inbox under its lock if the loop still admits work, then wakes the
    /// loop unless a wake-up is already pending; returns false, having appended nothing, once the
    /// loop is closed. The one way work from other threads enters the inbox.
    @inline(__always)
    func appendToInbox(_ append: (inout Inbox) -> Void) -> Bool {
        let accepted = inbox.withLock { inbox -> Bool? in
            guard inbox.lifecycle.admitsWork else { return nil }
            append(&inbox)
            if inbox.wakeupPending { return false }
            inbox.wakeupPending = true
            return true
        }
        guard let mustWake = accepted else { return false }
        if mustWake { wakeUp() }
        return true
    }

    /// Makes the loop's driver look at the inbox again (the backend's wake-up: one `eventfd`
    /// write on libevent).
    @inline(__always)
    func wakeUp() {
        backend.wakeUp(self)
    }
}

/// What other threads hand to the loop, and the lifecycle they share, under
/// ``EventLoop/inbox``.
struct Inbox {
    /// Who drives the loop and how far shutdown got; the only copy every thread may read.
    var lifecycle = LoopLifecycle()
    /// Submitted work, in submission order.
    var work: [LoopWork] = []
    /// Timers scheduled from other threads, in scheduling order, each with its place among
    /// ``work``.
    var timers: [InboxTimer] = []
    /// True while the loop is sure to look at the inbox again before it blocks; producers then
    /// skip the `eventfd` write. Reset by the loop, under the lock, only when it finds the inbox
    /// empty right before blocking, so no submission can be missed.
    var wakeupPending = false
}

/// A timer another thread scheduled, waiting in the inbox for the loop to arm it.
struct InboxTimer {
    /// How many of the inbox's work items were submitted before this timer.
    var position: Int
    var handle: EventLoopScheduledWork
    /// On the loop's clock, taken when the timer was scheduled.
    var deadline: UInt64
    var work: LoopWork
}
