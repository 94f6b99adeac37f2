import Tomorrowland

/// Drives ``ShardedStore/sweepExpired(budget:)`` from timers on an executor: every `interval`,
/// or again after a millisecond while a sweep leaves due keys behind (so a burst of expiring
/// keys is cleared in bounded slices without stalling the loop).
///
/// The timers run on `executor` (the daemon's first loop, or a `TestLoop` in tests).
///
/// - Important: `@unchecked Sendable`: `state` is only touched while holding its lock.
public final class ExpirySweeper: @unchecked Sendable {
    private let store: ShardedStore
    private let executor: any PromiseExecutor
    private let interval: Duration
    private let budget: Int
    private let lock = PthreadMutex()
    private var scheduled: (any PromiseScheduledWork)?
    private var stopped = false

    /// A sweeper of `store` on `executor`; call ``start()``.
    public init(
        store: ShardedStore, executor: any PromiseExecutor, interval: Duration = .milliseconds(100),
        budget: Int = 10_000
    ) {
        self.store = store
        self.executor = executor
        self.interval = interval
        self.budget = budget
    }

    /// Arms the first sweep.
    public func start() {
        arm(after: interval)
    }

    /// Cancels the pending sweep; no sweep runs afterwards.
    public func stop() {
        let work: (any PromiseScheduledWork)? = lock.withLock {
            stopped = true
            defer { scheduled = nil }
            return scheduled
        }
        work?.cancel()
    }

    private func arm(after delay: Duration) {
        let work = executor.schedule(after: delay) { [self] in
            let (_, more) = store.sweepExpired(budget: budget)
            arm(after: more ? .milliseconds(1) : interval)
        }
        let cancelNow = lock.withLock {
            if stopped { return true }
            scheduled = work
            return false
        }
        if cancelNow { work.cancel() }
    }
}
