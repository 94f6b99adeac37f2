import Tomorrowland

/// One unit of work a loop runs: a closure, a promise callback, a promise timer, or a Swift
/// Concurrency job.
///
/// Jobs are a case of their own so that a loop acting as a `SerialExecutor`/`TaskExecutor` can
/// queue them without allocating a closure around each one. The ``SchedulingCore`` never runs
/// work itself: it only decides what runs next, and the loop runs it with
/// ``run(asTaskExecutor:)``.
@usableFromInline
package enum LoopWork: Sendable {
    /// A closure submitted with `submit` or `schedule(after:)`.
    case closure(@Sendable () -> Void)
    /// A job enqueued by the Swift Concurrency runtime.
    case job(UnownedJob)
    /// A promise callback handed over with `PromiseExecutor.submit(job:)` (no closure allocated).
    case promiseJob(any PromiseJob)
    /// A promise timer stored with `PromiseExecutor.storeTimer(_:after:)` (no closure, no handle);
    /// only ever in a loop's timers. A loop that removes it unrun without a cancel (shutdown)
    /// must call ``releaseUnrun()``.
    case promiseTimer(any PromiseTimerJob)
}

extension LoopWork {
    /// Runs the item on the calling thread, the loop's: how both `EventLoop` and `TestLoop` run
    /// work.
    ///
    /// A Swift Concurrency job runs with the loop as its **task executor**, not "isolated to" the
    /// loop as a serial executor. Measured with the cross-loop scenarios (a ticker interleaved with
    /// the task), this form costs the fewest trips through the loop's queue:
    ///
    /// | step of a task that prefers the loop | isolated to the loop | on the loop as task executor |
    /// |---|---|---|
    /// | the task starts | 1 hop | none |
    /// | it calls a nonisolated async function | 1 hop | none |
    /// | that function returns | 1 hop | none |
    /// | it calls an actor pinned to the loop | none | 1 hop |
    /// | the actor method returns | 1 hop | none |
    /// | that actor calls another actor pinned to the loop, which returns | none | 2 hops |
    ///
    /// Run isolated to the serial executor, every nonisolated step has to leave it, which the
    /// runtime does by queueing the job again behind the loop's other work. On the task executor
    /// only entering an actor (or re-entering it after a call) is a hop: the common shapes (a task
    /// on the loop that awaits helpers, promises and one actor) take fewer hops, calls between
    /// actors pinned to the same loop take more. Actor isolation stays exact: the runtime confirms it through
    /// the loop's `checkIsolated()`/`isIsolatingCurrentContext()` (a thread-local compare), and
    /// code that is not the loop's (a task without the loop preference returning from the actor, a
    /// default actor it calls) still leaves the loop's thread (checked by the loop's tests).
    ///
    /// Why no form has both: the runtime decides whether an `await` hops by comparing the serial
    /// executor a job was run on with the one the next code needs, by identity
    /// (`swift_task_switch`), and the loop cannot know, when it starts a job, which the job will
    /// need next. Run on the task executor, a job counts as nonisolated, so entering an actor
    /// pinned to the loop hops, even from another such actor; run isolated to the loop, leaving
    /// an actor for nonisolated code hops. The Benchmarks package's AsyncHopBench measures both
    /// (Benchmarks/README.md): on the task executor, awaiting an actor method, a nonisolated
    /// function or a promise costs less, and an actor calling a second actor pinned to the same
    /// loop pays one more hop per await through the loop's queue (the runtime enqueueing the
    /// task, its status records, the task allocator, the thread-local executor context, then the
    /// loop queueing and picking the job).
    ///
    /// - Parameter executor: The loop as an unowned task executor.
    @inlinable
    @inline(__always)
    package func run(asTaskExecutor executor: UnownedTaskExecutor) {
        switch self {
        case .closure(let body):
            body()
        case .promiseJob(let job):
            job.run()
        case .promiseTimer(let timer):
            timer.timerFired()
        case .job(let job):
            job.runSynchronously(on: executor)
        }
    }
}

extension LoopWork {
    /// Runs the item on the calling thread, the loop's, for a loop that queues no Swift
    /// Concurrency jobs (the NIO executor): a job here is a bug.
    package consuming func runWithoutJobs() {
        switch consume self {
        case .closure(let body): body()
        case .promiseJob(let job): job.run()
        case .promiseTimer(let timer): timer.timerFired()
        case .job: preconditionFailure("NIOEventLoopExecutor runs no Swift Concurrency jobs")
        }
    }
}

extension LoopWork {
    /// Releases a timer that its loop removed and will never run (shutdown): a promise timer is
    /// told (``PromiseTimerJob/timerReleased()``), so that the promise waiting on it ends
    /// cancelled; other work is simply released. Call outside every lock, on the releasing thread.
    package consuming func releaseUnrun() {
        if case .promiseTimer(let timer) = consume self { timer.timerReleased() }
    }
}
