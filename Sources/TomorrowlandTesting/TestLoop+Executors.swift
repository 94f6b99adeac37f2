import Tomorrowland
internal import TomorrowlandScheduling

/// A `TestLoop` is a serial executor and a task executor, so async code under test runs on it
/// deterministically.
///
/// Start a task with `Task(executorPreference: loop) { … }`, or give an actor
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }`:
/// its jobs join the loop's queue like submitted closures (same FIFO, same sequence counter), and
/// run only when the test drives the loop, on the driving thread. A continuation resumed from the
/// test comes back onto the loop and waits for the next ``run()``. No yielding heuristics.
///
/// Jobs run exactly as on an `EventLoop` (the two share `LoopWork.run(asTaskExecutor:)`): on the
/// loop as a task executor, not isolated to it as a serial executor. Nonisolated task code then
/// continues without being queued again, and an actor pinned to the loop is entered with one hop
/// (queued behind work already submitted). `assumeIsolated` inside the loop's work succeeds
/// through ``checkIsolated()``.
///
/// `unownedExecutor` does not retain the loop: an actor using it keeps its own reference. Jobs
/// still queued when the loop is destroyed never run and their tasks never resume, so drive the
/// loop until the tasks under test are done (``checkNoPendingWork()`` tells).
extension TestLoop: SerialExecutor, TaskExecutor {
    /// Queues `job` behind the loop's ready work; it runs when the test next drives the loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    /// This loop as the executor of actors that use it.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// This loop as a task executor preference.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the program unless the calling thread is running this loop's work, so that
    /// `assumeIsolated` succeeds exactly inside work the loop runs.
    public func checkIsolated() {
        precondition(
            isCurrent,
            "Not running on this TestLoop: isolated code must run from work the loop runs (driven by run() or advance)")
    }

    /// Whether the calling thread is running this loop's work: the non-crashing form of
    /// ``checkIsolated()`` the runtime prefers.
    public func isIsolatingCurrentContext() -> Bool? {
        isCurrent
    }
}

/// The test loop runs one item at a time, on the driving thread, and ``TestLoop/isCurrent`` is
/// exact, so loop-bound state and isolated promise callbacks work on it as on an `EventLoop`.
extension TestLoop: SerialPromiseExecutor {}
