import Tomorrowland
internal import TomorrowlandScheduling

/// The loop as a Swift Concurrency executor: a task or actor that prefers the loop runs its jobs
/// on the loop's thread, in the same queue as promise work (a job is queued as is, with no closure
/// around it).
///
/// - An actor pins itself to a loop with
///   `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }`.
///   That reference is unowned: the actor must keep the loop alive itself (a stored
///   `let loop: EventLoop`), as Swift requires of every custom executor.
/// - `Task(executorPreference: loop) { … }` runs the task's nonisolated code on the loop; the task
///   retains its preferred executor.
/// - Jobs run with the loop as their task executor, as on a `TestLoop` (the two share
///   `LoopWork.run(asTaskExecutor:)`): a task that prefers the loop starts, calls nonisolated
///   async functions, awaits promises and returns from actor methods without another trip
///   through the queue; entering an actor pinned to the loop (or re-entering it after a call) is
///   one trip, behind the work already submitted. Chosen on measurements: fewer hops for tasks,
///   more for calls between two actors pinned to the same loop (see `LoopWork`'s documentation
///   and the Benchmarks package's AsyncHopBench).
/// - ``checkIsolated()`` and ``isIsolatingCurrentContext()`` answer from the same exact
///   thread-local check as ``inEventLoop``, so `assumeIsolated` and `preconditionIsolated` work on
///   the loop's thread, inside its work, and nowhere else.
/// - Two loops are never the same execution context: identity is the loop object
///   (`UnownedSerialExecutor(ordinary:)`, so `isSameExclusiveExecutionContext` is never asked).
///
/// - Important: Jobs follow the loop's lifecycle (see ``shutdown()``): jobs queued before the loop
///   closes run in its shutdown drain; a job submitted after it closed, or still queued when a loop
///   that was never shut down is destroyed, is dropped without running, and its task never
///   resumes (its memory is not reclaimed either; the loop reports the first such job on standard
///   error). There is no other thread the job's isolation would allow it to run on. Finish the
///   tasks and actors that use a loop before shutting it down.
extension EventLoop: SerialExecutor, TaskExecutor {
    /// Queues a job to run on the loop's thread; same rules as ``execute(_:)`` (after shutdown
    /// the job is dropped, see above).
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    /// The loop as an unowned serial executor (it does not keep the loop alive).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The loop as an unowned task executor (it does not keep the loop alive).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the process unless the calling thread is driving this loop; this is what makes
    /// `assumeIsolated` work for actors whose executor is the loop.
    public func checkIsolated() {
        precondition(
            inEventLoop,
            "Expected to run on this EventLoop's thread, inside its work: hop there first (await an actor pinned to the loop, loop.execute { }, or a promise callback on .loop(loop))"
        )
    }

    /// Whether the calling thread is driving this loop: the non-crashing form of
    /// ``checkIsolated()`` the runtime prefers.
    public func isIsolatingCurrentContext() -> Bool? {
        inEventLoop
    }
}

/// The loop runs one item at a time on one thread and ``inEventLoop`` is exact, so loop-bound
/// state (``LoopBound``) and isolated promise callbacks (``Promise/isolated(to:)``) may rely on it.
extension EventLoop: SerialPromiseExecutor {}
