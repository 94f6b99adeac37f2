import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Executors that take promise callbacks as jobs (`submit(job:)`) and run them later themselves,
/// as the event loop and the test loop do.
@Suite("Executors that store jobs")
struct JobExecutorTests {
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
