/// Something that runs promise work: a Dispatch queue, an `OperationQueue`, an event loop, or a
/// virtual-time test loop.
///
/// The promise core reaches every asynchronous ``PromiseContext`` through this protocol, and never
/// knows which kind of executor it talks to. Conform a type to it to make it a promise context
/// with ``PromiseContext/executor(_:)``.
///
/// - Important: Every requirement may be called from any thread.
public protocol PromiseExecutor: AnyObject, Sendable {
    /// Runs `work` soon, on this executor.
    ///
    /// `work` never runs synchronously inside this call, not even when the caller is already
    /// running on this executor: an executor that is current queues the work behind what it is
    /// running (in FIFO order) instead of re-entering.
    func submit(_ work: @escaping @Sendable () -> Void)

    /// Runs `job` soon, on this executor, with the same rules as ``submit(_:)``.
    ///
    /// The promise core hands each callback it dispatches to an executor in this form: the job
    /// is the callback's own node, so an executor that stores jobs directly (as the event loop and
    /// the test loop do) dispatches a callback without allocating anything. On a
    /// ``SerialPromiseExecutor``, consecutive callbacks of one resolution that only observe the
    /// result arrive as one job that runs them in registration order. The default
    /// implementation wraps the job in a closure for ``submit(_:)``.
    ///
    /// `job` is `consuming`: an executor that stores it takes over the caller's reference
    /// instead of retaining it once more.
    ///
    /// An executor written outside this library implements it well in one of two ways:
    /// - it keeps its own queue of jobs (an array or ring buffer of `any PromiseJob`) and calls
    ///   ``PromiseJob/run()`` on each from its thread, which costs no allocation per callback;
    /// - or, on top of a closure-based runner (a NIO loop's `execute`), it wraps the job in one small
    ///   final class whose `deinit` calls ``PromiseJob/abandon()`` unless the job ran, and
    ///   submits a closure that captures only that object (so the object is the closure's
    ///   context: one allocation, as the closure form, and a runner that drops the closure
    ///   unrun still settles the job). `TomorrowlandNIO`'s executor does both.
    ///
    /// Either way, call exactly one of `run()` and `abandon()` per job. Keeping the default
    /// implementation is also correct, except that a runner that drops the closure unrun leaves
    /// the callback's promise pending instead of cancelled.
    func submit(job: consuming any PromiseJob)

    /// Runs `work` on this executor once `delay` has passed on the executor's own clock.
    ///
    /// This is what `timeout`, `delay` and `Promise(on:fulfilled:after:)` use, so timers on an
    /// event loop are loop timers and timers on a test loop are virtual. Work scheduled for the
    /// same deadline runs in scheduling order.
    ///
    /// - Parameters:
    ///   - delay: The time to wait. Zero or negative means "as soon as possible", still never
    ///     synchronously inside this call.
    ///   - work: The work to run, on this executor.
    /// - Returns: A handle whose ``PromiseScheduledWork/cancel()`` keeps `work` from running if
    ///   it has not started yet, and releases it.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork

    /// Runs `work` on this executor once `delay` has passed, like ``schedule(after:_:)``, for work
    /// that checks by itself, when it starts, whether it is still wanted.
    ///
    /// The promise core arms its timers (`timeout`, `delay`, `Promise(on:…after:)`, `retry`) with
    /// this: their work does nothing once the timer was cancelled or has settled. So the executor
    /// may drop one promise of ``schedule(after:_:)``: that after ``PromiseScheduledWork/cancel()``
    /// returns on another thread the work cannot start. Everything else holds: the work runs at
    /// most once, on this executor, after `delay`; `cancel()` releases it (at once on the
    /// executor's thread, soon otherwise); an executor that will never run it releases it unrun.
    /// An executor that guards its timed work with state of its own (the event loop wraps the
    /// work in a closure that checks its handle) can then store the work as it is, which saves
    /// an allocation per timer.
    ///
    /// The default implementation calls ``schedule(after:_:)``.
    ///
    /// - Parameters:
    ///   - delay: The time to wait. Zero or negative means "as soon as possible", still never
    ///     synchronously inside this call.
    ///   - work: The work to run, on this executor; it must do nothing if it is no longer wanted.
    /// - Returns: A handle whose ``PromiseScheduledWork/cancel()`` keeps `work` from being
    ///   started by the executor, if it has not been yet, and releases it.
    func scheduleSelfGuarded(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) -> any PromiseScheduledWork

    /// Keeps a promise timer in this executor's own timers, if it can, and returns the identifier
    /// that cancels it; `nil` if it does not keep it (the default).
    ///
    /// The promise core arms its timers (`timeout`, `delay`, `Promise(on:…after:)`, `retry`) with
    /// this first: an executor that keeps a queue of timed jobs stores `timer` itself (one strong
    /// reference) and needs no closure, no handle and no allocation of its own per timer. Once
    /// `delay` has passed, it calls ``PromiseTimerJob/timerFired()`` on its own thread and drops
    /// the reference; if it will never run the timer (it shut down), it calls
    /// ``PromiseTimerJob/timerReleased()`` instead, on the releasing thread, so that the promise
    /// waiting on the timer ends cancelled. It calls exactly one of the two, at most once, or
    /// neither when the timer is cancelled with ``cancelStoredTimer(_:)`` first.
    ///
    /// The timer checks its own state before doing anything: a call after a cancel does nothing.
    /// So a cancel from another thread may leave the timer in place until the executor's thread
    /// removes it, and the timer may even be fired meanwhile.
    ///
    /// Returning `nil` is always correct and leaves `timer` unreferenced: the core then arms it with
    /// ``scheduleSelfGuarded(after:_:)``. An executor may decline case by case: the event loop
    /// stores timers armed on its own thread, and declines others (the identifier must come back
    /// at once, and only the loop's thread reaches its timers).
    ///
    /// The default implementation returns `nil`.
    ///
    /// - Parameters:
    ///   - timer: The timer, to be kept (retained) until it fires, is released, or is cancelled.
    ///     Borrowed, not `consuming`: an executor that declines then costs its caller no retain
    ///     and release.
    ///   - delay: The time to wait, on the executor's clock, as for ``schedule(after:_:)``.
    /// - Returns: What names the stored timer for ``cancelStoredTimer(_:)``, or `nil` when the
    ///   executor did not store it.
    func storeTimer(_ timer: any PromiseTimerJob, after delay: Duration) -> PromiseTimerID?

    /// Removes a timer that ``storeTimer(_:after:)`` stored and drops the executor's reference to
    /// it, without calling it, if it is still pending.
    ///
    /// Safe from any thread; does nothing for a timer that fired, was released or was cancelled
    /// already. On the executor's own thread the reference should go at once (a cancelled
    /// deadline must not keep its promise alive); from another thread the executor may hop to its
    /// thread to do it.
    ///
    /// The default implementation does nothing (the default ``storeTimer(_:after:)`` stores
    /// nothing).
    func cancelStoredTimer(_ id: PromiseTimerID)

    /// Whether the calling thread is currently running this executor's work.
    ///
    /// May answer `false` when unsure (a hint for fast paths), but never `true` wrongly.
    var isCurrent: Bool { get }

    /// Reserves a place in line for work that a timer will release later, for an executor whose
    /// timed work keeps its place in line; `nil` for the others.
    ///
    /// The promise core calls this once per timer (`timeout`, `delay`, `Promise(on:…after:)`,
    /// `retry`) when the timer is created, before it is armed, and then arms the timer through the
    /// reservation instead of ``schedule(after:_:)``. Operation queues reserve (Tomorrowland's
    /// rule: the operation is added at once and only becomes ready when the timer fires, so it
    /// goes before operations added after it). The default implementation returns `nil`: the
    /// timer is then armed with ``schedule(after:_:)`` when it starts.
    ///
    /// - Returns: The reserved place, or `nil` when this executor keeps no place for timed work.
    func reserveTimerSlot() -> (any PromiseTimerReservation)?
}

/// A handle to work scheduled with ``PromiseExecutor/schedule(after:_:)``.
public protocol PromiseScheduledWork: Sendable {
    /// Keeps the scheduled work from running, if it has not started yet, and releases it.
    ///
    /// Safe from any thread; calling it again, or after the work ran, does nothing.
    func cancel()
}

/// A place in line that an executor reserved for timed work (``PromiseExecutor/reserveTimerSlot()``).
///
/// A class, so that the core stores and checks an optional reservation as one pointer (an
/// executor without reservations, the common case, then costs a nil check).
///
/// - Important: Every requirement may be called from any thread.
public protocol PromiseTimerReservation: AnyObject, Sendable {
    /// Starts the timer: `work` runs in the reserved place, on the executor, once `delay` has
    /// passed. Call at most once, and not after ``cancel()``.
    ///
    /// - Returns: A handle whose ``PromiseScheduledWork/cancel()`` stops the timer, frees the
    ///   reserved place and releases `work`.
    func arm(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork

    /// Frees the reserved place without running anything, for a timer that will never be armed.
    /// Idempotent.
    func cancel()
}

extension PromiseExecutor {
    /// Schedules `work` with ``schedule(after:_:)``, whose stronger guarantee on `cancel()`
    /// serves self-guarded work as well.
    public func scheduleSelfGuarded(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) -> any PromiseScheduledWork {
        schedule(after: delay, work)
    }

    /// Stores nothing: the promise core arms its timers with ``scheduleSelfGuarded(after:_:)``.
    public func storeTimer(_ timer: any PromiseTimerJob, after delay: Duration) -> PromiseTimerID? {
        nil
    }

    /// Does nothing: the default ``storeTimer(_:after:)`` never stores a timer.
    public func cancelStoredTimer(_ id: PromiseTimerID) {}

    /// Reserves nothing: timers on this executor are armed with ``schedule(after:_:)``.
    public func reserveTimerSlot() -> (any PromiseTimerReservation)? {
        nil
    }

    /// Wraps `job` in a closure and submits it with ``submit(_:)``.
    public func submit(job: consuming any PromiseJob) {
        let job = consume job
        submit { job.run() }
    }
}

/// A unit of promise work handed to an executor with ``PromiseExecutor/submit(job:)``.
///
/// Only the promise core creates jobs; executors, including ones written outside this library,
/// receive them (see ``PromiseExecutor/submit(job:)`` for how to implement it). An executor calls
/// exactly one of ``run()`` and ``abandon()`` on each job it is given, once, and then drops it.
public protocol PromiseJob: AnyObject, Sendable {
    /// Runs the job, on the executor's thread. Call exactly once, and never together with
    /// ``abandon()``.
    func run()

    /// Settles the job without running its callback, for an executor that will never run it (an
    /// event loop that was shut down).
    ///
    /// The callback does not run and what it captured is released on the calling thread; a
    /// promise the callback would have resolved (the one `map`, `then`, `flatMap`, `recover`...
    /// return) resolves as cancelled, so that nothing waits on it forever. Safe from any thread.
    /// Call exactly once, and never together with ``run()``.
    ///
    /// An executor that drops a job without calling either leaves such a promise pending.
    func abandon()
}

/// A promise timer that an executor stores itself (``PromiseExecutor/storeTimer(_:after:)``).
///
/// Only the promise core creates timer jobs; an executor receives them, keeps one strong
/// reference until the timer is due (or is cancelled), and calls exactly one of ``timerFired()``
/// and ``timerReleased()``, once, unless ``PromiseExecutor/cancelStoredTimer(_:)`` removed it
/// first. Either call after the timer was cancelled or settled does nothing: the job guards
/// itself.
public protocol PromiseTimerJob: AnyObject, Sendable {
    /// The delay passed: runs the timer's work, on the executor's thread, unless the timer was
    /// cancelled.
    func timerFired()

    /// The executor will never run the timer (it shut down): what waits on it ends cancelled.
    /// Runs on the releasing thread; does nothing if the timer was cancelled or fired.
    func timerReleased()
}

/// Names a timer that an executor stored with ``PromiseExecutor/storeTimer(_:after:)``: two
/// numbers of the executor's choosing, such as a slot in its timer heap and a sequence number that
/// tells the slot's successive timers apart.
public struct PromiseTimerID: Hashable, Sendable {
    /// The executor's first number (the event loop's: the timer's slot).
    public var slot: UInt32
    /// The executor's second number (the event loop's: the timer's sequence number, never reused).
    public var sequence: UInt64

    /// An identifier made of the executor's two numbers.
    @inlinable
    public init(slot: UInt32, sequence: UInt64) {
        self.slot = slot
        self.sequence = sequence
    }
}
