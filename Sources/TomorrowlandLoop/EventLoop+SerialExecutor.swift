import Tomorrowland

/// The loop as a Swift Concurrency executor: a task or actor that prefers the loop runs its jobs
/// on the loop's thread, in the same queue as promise work (a job is queued as is, with no closure
/// around it).
extension EventLoop: SerialExecutor, TaskExecutor {
    /// Queues a job to run on the loop's thread; same rules as ``execute(_:)``.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    /// The loop as an unowned serial executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Stops the process unless the calling thread is driving this loop; this is what makes
    /// `assumeIsolated` work for actors whose executor is the loop.
    public func checkIsolated() {
        precondition(inEventLoop, "Expected to run on this EventLoop's thread, inside its work")
    }
}
