/// One unit of work a loop runs: a closure, or a Swift Concurrency job.
///
/// Jobs are a case of their own so that a loop acting as a `SerialExecutor`/`TaskExecutor` can
/// queue them without allocating a closure around each one. Who runs a `.job` decides the
/// executors it runs on (`UnownedJob.runSynchronously(isolatedTo:taskExecutor:)`), so the
/// ``SchedulingCore`` never runs work itself: it only decides what runs next.
package enum LoopWork: Sendable {
    /// A closure submitted with `submit` or `schedule(after:)`.
    case closure(@Sendable () -> Void)
    /// A job enqueued by the Swift Concurrency runtime.
    case job(UnownedJob)
}
