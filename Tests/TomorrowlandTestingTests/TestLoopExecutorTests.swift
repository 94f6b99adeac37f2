import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

/// An actor whose jobs run on a test loop.
actor LoopBoundCounter {
    let loop: TestLoop
    private(set) var value = 0

    init(loop: TestLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Reads `value` synchronously, asserting (through the executor's `checkIsolated`) that the
    /// caller runs on the loop.
    nonisolated func valueAssumingIsolation() -> Int {
        assumeIsolated { $0.value }
    }

    /// Increments and reports whether it ran on the loop.
    func increment() -> Bool {
        value += 1
        return loop.isCurrent
    }
}

@Suite("TestLoop as a SerialExecutor and TaskExecutor")
struct TestLoopExecutorTests {
    @Test func aTaskPreferringTheLoopRunsOnlyWhenTheTestDrivesIt() async throws {
        try await withTestLoop { loop in
            let log = Recorder<String>()
            let task = Task(executorPreference: loop) {
                log.record("task on loop: \(loop.isCurrent)")
                return 42
            }
            #expect(loop.readyCount == 1)
            #expect(log.values.isEmpty)
            loop.run()
            #expect(log.values == ["task on loop: true"])
            #expect(await task.value == 42)
            #expect(loop.pendingWorkCount == 0)
        }
    }

    @Test func jobsShareTheFIFOWithSubmittedClosures() async throws {
        try await withTestLoop { loop in
            let log = Recorder<String>()
            loop.submit { log.record("closure before") }
            let task = Task(executorPreference: loop) { log.record("job") }
            loop.submit { log.record("closure after") }
            loop.run()
            #expect(log.values == ["closure before", "job", "closure after"])
            await task.value
        }
    }

    @Test func aResumedContinuationComesBackOntoTheLoopAndWaitsForTheNextRun() async throws {
        try await withTestLoop { loop in
            let log = Recorder<String>()
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            let task = Task(executorPreference: loop) {
                for await value in stream {
                    log.record("got \(value) on loop: \(loop.isCurrent)")
                }
                log.record("finished")
            }
            loop.run()  // the task starts and suspends, waiting for the stream
            #expect(log.values.isEmpty)
            #expect(loop.pendingWorkCount == 0)
            continuation.yield(1)
            #expect(log.values.isEmpty)
            #expect(loop.readyCount == 1)
            loop.run()
            #expect(log.values == ["got 1 on loop: true"])
            continuation.finish()
            loop.run()
            #expect(log.values == ["got 1 on loop: true", "finished"])
            await task.value
        }
    }

    @Test func actorsUsingTheLoopAsExecutorRunTheirMethodsOnIt() async throws {
        try await withTestLoop { loop in
            let counter = LoopBoundCounter(loop: loop)
            let task = Task(executorPreference: loop) { await counter.increment() }
            loop.run()
            #expect(await task.value == true)
            let value = Task(executorPreference: loop) { await counter.value }
            loop.run()
            #expect(await value.value == 1)
        }
    }

    @Test func callingAnActorOnTheLoopIsAHopThatQueuesBehindWorkAlreadySubmitted() async throws {
        try await withTestLoop { loop in
            let log = Recorder<String>()
            let counter = LoopBoundCounter(loop: loop)
            let task = Task(executorPreference: loop) {
                log.record("task")
                let onLoop = await counter.increment()
                log.record("actor ran on loop: \(onLoop)")
            }
            loop.submit { log.record("submitted after the task") }
            loop.run()
            #expect(log.values == ["task", "submitted after the task", "actor ran on loop: true"])
            await task.value
        }
    }

    @Test func assumeIsolatedSucceedsInsideWorkTheLoopRuns() throws {
        try withTestLoop { loop in
            let counter = LoopBoundCounter(loop: loop)
            let seen = Locked<Int?>(nil)
            loop.submit {
                let value = counter.valueAssumingIsolation()
                seen.withLock { $0 = value }
            }
            loop.run()
            #expect(seen.withLock { $0 } == 0)
        }
    }

    @Test func aJobStartedByATimerSeesThatTimersVirtualTime() async throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            _ = loop.schedule(after: .seconds(2)) {
                Task(executorPreference: loop) { [log, loop] in
                    log.record("job@\(loop.nowInMilliseconds)")
                }
            }
            loop.advance(by: .seconds(3))
            #expect(log.values == ["job@2000"])
        }
    }
}
