import Foundation
import Testing
import Tomorrowland

/// Executors that take promise callbacks as jobs (`submit(job:)`) and run them later themselves,
/// as the event loop and the test loop do.
@Suite("Executors that store jobs")
struct JobExecutorTests {
    /// Keeps the jobs it is given until the test runs them. Its `submit(job:)` is written without
    /// `consuming`, as conformers written before the requirement took its job `consuming` are:
    /// it must still satisfy the requirement.
    final class ManualJobExecutor: PromiseExecutor, @unchecked Sendable {
        // Invariant: `jobs` is only touched with `lock` held.
        private let lock = NSLock()
        private var jobs: [any PromiseJob] = []

        func submit(_ work: @escaping @Sendable () -> Void) {
            preconditionFailure("promise callbacks arrive as jobs")
        }

        func submit(job: any PromiseJob) {
            lock.withLock { jobs.append(job) }
        }

        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
            preconditionFailure("not used by these tests")
        }

        var isCurrent: Bool { false }

        /// The number of jobs waiting.
        var pendingCount: Int { lock.withLock { jobs.count } }

        /// Runs the jobs waiting now, in submission order, and drops them.
        func runPending() {
            let taken = lock.withLock {
                defer { jobs.removeAll() }
                return jobs
            }
            for job in taken { job.run() }
        }
    }

    @Test("map, then and tap callbacks run as jobs, in order, and each job runs its callback once")
    func callbacksRunAsJobs() {
        let executor = ManualJobExecutor()
        let context = PromiseContext.executor(executor)
        let log = Recorder<String>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        let mapped = promise.map(on: context) { value -> Int in
            log.record("map \(value)")
            return value * 2
        }
        _ = mapped.then(on: context) { log.record("then \($0)") }
        promise.tap(on: context) { log.record("tap \($0.value ?? -1)") }
        #expect(executor.pendingCount == 0)

        resolver.fulfill(with: 21)
        #expect(executor.pendingCount == 2, "map's and tap's callbacks")
        #expect(log.values.isEmpty)
        executor.runPending()
        #expect(log.values == ["map 21", "tap 21"])
        #expect(mapped.result == .value(42))

        #expect(executor.pendingCount == 1, "then's callback, submitted when map's promise resolved")
        executor.runPending()
        #expect(log.values == ["map 21", "tap 21", "then 42"])
        #expect(executor.pendingCount == 0)
    }

    @Test("a flatMap callback run as a job adopts the promise it returns")
    func flatMapAsJob() {
        let executor = ManualJobExecutor()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        let (inner, innerResolver) = Promise<Int, Never>.makeWithResolver()
        let adopted = promise.flatMap(on: .executor(executor)) { _ in inner }
        resolver.fulfill(with: 1)
        executor.runPending()
        #expect(adopted.result == nil)
        innerResolver.fulfill(with: 7)
        #expect(adopted.result == .value(7))
    }
}
