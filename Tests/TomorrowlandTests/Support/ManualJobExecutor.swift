import Tomorrowland
import TomorrowlandTestSupport

/// Keeps the jobs it is given until the test runs them. Its `submit(job:)` is written without
/// `consuming`, as conformers written before the requirement took its job `consuming` are:
/// it must still satisfy the requirement.
final class ManualJobExecutor: PromiseExecutor, Sendable {
    private let jobs = Locked<[any PromiseJob]>([])

    func submit(_ work: @escaping @Sendable () -> Void) {
        preconditionFailure("promise callbacks arrive as jobs")
    }

    func submit(job: any PromiseJob) {
        jobs.withLock { $0.append(job) }
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        preconditionFailure("not used by these tests")
    }

    var isCurrent: Bool { false }

    /// The number of jobs waiting.
    var pendingCount: Int { jobs.withLock { $0.count } }

    /// Drops the jobs waiting now without running them, as an executor that shuts down does.
    /// They are released after the lock is dropped.
    func dropPending() {
        _ = takePending()
    }

    /// Runs the jobs waiting now, in submission order, and drops them.
    func runPending() {
        for job in takePending() { job.run() }
    }

    private func takePending() -> [any PromiseJob] {
        jobs.withLock { jobs in
            defer { jobs.removeAll() }
            return jobs
        }
    }
}
