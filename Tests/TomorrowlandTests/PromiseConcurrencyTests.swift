import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

/// A promise whose cancel requests are recorded and honoured, and its resolver.
private func cancellablePromise(
    recordingIn requests: Recorder<String>
) -> (StdPromise<Int>, StdPromise<Int>.Resolver) {
    let (promise, resolver) = StdPromise<Int>.makeWithResolver()
    resolver.onRequestCancel(on: .immediate) { resolver in
        requests.record("requested")
        resolver.cancel()
    }
    return (promise, resolver)
}

/// A promise from ``cancellablePromise(recordingIn:)`` that only a cancel request resolves: its
/// resolver is kept in `work`, standing for the work that would resolve it.
private func pendingCancellablePromise(
    recordingIn requests: Recorder<String>, work: Recorder<StdPromise<Int>.Resolver>
) -> StdPromise<Int> {
    let (promise, resolver) = cancellablePromise(recordingIn: requests)
    work.record(resolver)
    return promise
}

extension Locked where Value == StdPromise<Int>? {
    /// Takes the promise out, leaving nil: the caller then owns that handle.
    func take() -> StdPromise<Int> {
        withLock { stored in
            defer { stored = nil }
            return stored!
        }
    }
}

@Suite("Awaiting a promise")
struct PromiseAwaitTests {
    @Test func valueReturnsTheValueOfAResolvedPromise() async throws {
        #expect(try await StdPromise<Int>(fulfilled: 7).value == 7)
    }

    @Test func valueWaitsForAValueResolvedOnAnotherThread() async throws {
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { resolver.fulfill(with: 42) }
        #expect(try await promise.value == 42)
    }

    @Test func valueThrowsThePromisesErrorAsIs() async {
        let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
        DispatchQueue.global().async { resolver.reject(with: .boom) }
        await #expect(throws: TestError.boom) { try await promise.value }
    }

    @Test func valueThrowsCancellationErrorForACancelledPromise() async {
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        DispatchQueue.global().async { resolver.cancel() }
        await #expect(throws: CancellationError.self) { try await promise.value }
    }

    @Test func valueOfANoErrorPromiseThrowsOnlyCancellation() async throws {
        #expect(try await Promise<Int, NoError>(fulfilled: 3).value == 3)
        await #expect(throws: CancellationError.self) { try await Promise<Int, NoError>(with: .cancelled).value }
    }

    @Test func typedValueThrowsATypedRejectionOrCancellation() async {
        do throws(PromiseAwaitError<String>) {
            _ = try await Promise<Int, String>(rejected: "nope").typedValue
            Issue.record("expected a rejection")
        } catch {
            #expect(error == .rejected("nope"))
            #expect(error.error == "nope")
        }
        do throws(PromiseAwaitError<TestError>) {
            _ = try await Promise<Int, TestError>(with: .cancelled).typedValue
            Issue.record("expected cancellation")
        } catch {
            #expect(error.isCancelled)
        }
        let value = try? await Promise<Int, String>(fulfilled: 5).typedValue
        #expect(value == 5)
    }

    @Test func resolvedResultGivesEveryOutcomeWithoutThrowing() async {
        #expect(await Promise<Int, String>(fulfilled: 1).resolvedResult == .value(1))
        #expect(await Promise<Int, String>(rejected: "e").resolvedResult == .error("e"))
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        DispatchQueue.global().async { resolver.cancel() }
        #expect(await promise.resolvedResult == .cancelled)
    }

    @Test func theSynchronousResultPropertyKeepsItsMeaningInAsyncCode() async {
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        let now: PromiseResult<Int, String>? = promise.result
        #expect(now == nil)
        resolver.fulfill(with: 2)
        #expect(promise.result == .value(2))
    }

    @Test func aPromiseDroppedUnresolvedEndsTheWaitWithCancellation() async throws {
        let resolver = Locked<StdPromise<Int>.Resolver?>(nil)
        let held = Locked<StdPromise<Int>?>(StdPromise<Int>(on: .immediate) { resolver.value = $0 })
        try await withTestLoop { loop in
            // The task takes the only handle; then only the resolver keeps the promise alive.
            let task = Task(executorPreference: loop) { try await held.take().value }
            loop.run()  // the task is now waiting
            resolver.value = nil  // the last resolver goes: the promise is cancelled
            loop.run()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }
}

@Suite("Cancellation across the await bridge")
struct PromiseAwaitCancellationTests {
    @Test func cancellingTheWaitingTaskReachesOnRequestCancel() async throws {
        try await withTestLoop { loop in
            let requests = Recorder<String>()
            let work = Recorder<StdPromise<Int>.Resolver>()
            let task = Task(executorPreference: loop) {
                // The promise is a temporary: awaiting it consumes the only handle.
                try await pendingCancellablePromise(recordingIn: requests, work: work).value
            }
            loop.run()  // the task waits on the promise; no handle is left but the awaiting observer
            #expect(requests.values.isEmpty)
            task.cancel()
            #expect(requests.values == ["requested"])
            loop.run()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    @Test func aTaskCancelledBeforeItAwaitsRequestsCancellationAtOnce() async {
        let requests = Recorder<String>()
        let work = Recorder<StdPromise<Int>.Resolver>()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pendingCancellablePromise(recordingIn: requests, work: work).value
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(requests.values == ["requested"])
    }

    @Test func anotherObserverThatDoesNotAskKeepsThePromiseAlive() async throws {
        try await withTestLoop { loop in
            let requests = Recorder<String>()
            let (promise, resolver) = cancellablePromise(recordingIn: requests)
            let other = promise.then(on: .immediate) { _ in }
            let task = Task(executorPreference: loop) { try await promise.value }
            loop.run()
            task.cancel()
            #expect(requests.values.isEmpty)  // only one of two observers asked
            resolver.fulfill(with: 9)  // cancellation is advisory: the value still arrives
            loop.run()
            let value = try await task.value
            #expect(value == 9)
            #expect(other.result?.value == 9)
        }
    }

    @Test func aHandleKeptByTheCallerPinsThePromiseUntilItIsDropped() async throws {
        try await withTestLoop { loop in
            let requests = Recorder<String>()
            let work = Recorder<StdPromise<Int>.Resolver>()
            let kept = Locked<StdPromise<Int>?>(pendingCancellablePromise(recordingIn: requests, work: work))
            let awaited = Locked<StdPromise<Int>?>(kept.value)
            let task = Task(executorPreference: loop) { try await awaited.take().value }
            loop.run()
            task.cancel()
            #expect(requests.values.isEmpty)  // the kept handle pins it (rule D1)
            kept.value = nil  // the last handle goes: the awaiting observer's request propagates
            #expect(requests.values == ["requested"])
            loop.run()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    @Test func twoAwaitingTasksAreTwoObserversThatMustBothAsk() async throws {
        try await withTestLoop { loop in
            let requests = Recorder<String>()
            let work = Recorder<StdPromise<Int>.Resolver>()
            let first = Locked<StdPromise<Int>?>(pendingCancellablePromise(recordingIn: requests, work: work))
            let second = Locked<StdPromise<Int>?>(first.value)
            // Each task takes its own handle and consumes it by awaiting.
            let firstTask = Task(executorPreference: loop) { try await first.take().value }
            let secondTask = Task(executorPreference: loop) { try await second.take().value }
            loop.run()
            firstTask.cancel()
            #expect(requests.values.isEmpty)  // one of two observers asked
            secondTask.cancel()
            #expect(requests.values == ["requested"])
            loop.run()
            await #expect(throws: CancellationError.self) { try await firstTask.value }
            await #expect(throws: CancellationError.self) { try await secondTask.value }
        }
    }

    @Test func aPromiseCapturedByTheTaskIsPinnedButCanBeCancelledExplicitly() async throws {
        try await withTestLoop { loop in
            let requests = Recorder<String>()
            let work = Recorder<StdPromise<Int>.Resolver>()
            let promise = pendingCancellablePromise(recordingIn: requests, work: work)
            // The pattern for a task that owns its promise outright.
            let task = Task(executorPreference: loop) {
                try await withTaskCancellationHandler {
                    try await promise.value
                } onCancel: {
                    promise.requestCancel()
                }
            }
            loop.run()
            task.cancel()
            #expect(requests.values == ["requested"])
            loop.run()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    @Test func theWaitReleasesItsContinuationAndObserverOnceResolved() async throws {
        try await withTestLoop { loop in
            let deaths = Recorder<DeinitSpy.Death>()
            let (promise, resolver) = StdPromise<Int>.makeWithResolver()
            do {
                let spy = DeinitSpy("cancel handler", reportingTo: deaths)
                resolver.onRequestCancel(on: .immediate) { _ in spy.touch() }
            }
            let task = Task(executorPreference: loop) { try await promise.value }
            loop.run()
            #expect(deaths.values.isEmpty)
            resolver.fulfill(with: 1)
            #expect(deaths.values.map(\.name) == ["cancel handler"])
            loop.run()
            let value = try await task.value
            #expect(value == 1)
        }
    }
}

@Suite("The await bridge under races")
struct PromiseAwaitRaceTests {
    /// Resolution, task cancellation and the cancel request race on three threads; every wait
    /// must end exactly once, with the value or with cancellation (a second resume would trap).
    @Test func resolveAndCancelRacingEndEveryWaitExactlyOnce() async {
        let iterations = 300
        let outcomes = Recorder<String>()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<iterations {
                let work = Recorder<StdPromise<Int>.Resolver>()
                let (promise, resolver) = cancellablePromise(recordingIn: Recorder<String>())
                work.record(resolver)
                let held = Locked<StdPromise<Int>?>(promise)
                let task = Task { try await held.take().value }
                DispatchQueue.global().async { resolver.fulfill(with: index) }
                DispatchQueue.global().async { task.cancel() }
                group.addTask {
                    switch await task.result {
                    case .success(let value): outcomes.record(value == index ? "value" : "wrong value")
                    case .failure(let error): outcomes.record(error is CancellationError ? "cancelled" : "\(error)")
                    }
                }
            }
        }
        #expect(outcomes.count == iterations)
        #expect(outcomes.values.allSatisfy { $0 == "value" || $0 == "cancelled" })
    }
}

@Suite("Promises of async work")
struct PromiseAsyncOperationTests {
    @Test func theReturnedValueFulfils() async throws {
        let promise = StdPromise<Int> { 40 + 2 }
        #expect(try await promise.value == 42)
    }

    @Test func aThrownErrorRejects() async {
        let promise = Promise<Int, TestError> { () async throws(TestError) -> Int in throw .boom }
        #expect(await promise.resolvedResult == .error(.boom))
    }

    @Test func aThrownCancellationErrorCancels() async {
        let promise = StdPromise<Int> { throw CancellationError() }
        #expect(await promise.resolvedResult.isCancelled)
    }

    @Test func aNoErrorOperationFulfils() async throws {
        let promise = Promise<String, NoError> { "done" }
        #expect(try await promise.value == "done")
    }

    @Test func requestCancelCancelsTheTask() async {
        let started = Locked(false)
        let promise = StdPromise<Int> {
            started.value = true
            try await Task.sleep(for: .seconds(600))
            return 1
        }
        while !started.value { await Task.yield() }
        promise.requestCancel()
        #expect(await promise.resolvedResult.isCancelled)
    }

    @Test func automaticCancellationReachesTheTaskWhenEveryObserverAsks() async {
        let taskCancelled = Locked(false)
        let observed = StdPromise<Int> {
            try await withTaskCancellationHandler {
                try await Task.sleep(for: .seconds(600))
                return 0
            } onCancel: {
                taskCancelled.value = true
            }
        }
        let mapped = observed.map(on: .immediate) { $0 }
        _ = consume observed  // `mapped` is now its only observer, and no handle is left
        mapped.requestCancel()
        #expect(await mapped.resolvedResult.isCancelled)
        #expect(taskCancelled.value)
    }

    @Test func aTaskPreferringATestLoopRunsOnlyWhenTheLoopRuns() async throws {
        try withTestLoop { loop in
            let onLoop = Locked<Bool?>(nil)
            let promise = StdPromise<Int>(executorPreference: loop) {
                onLoop.value = loop.isCurrent
                return 5
            }
            #expect(onLoop.value == nil)
            #expect(promise.result == nil)
            loop.run()
            #expect(onLoop.value == true)
            #expect(promise.result?.value == 5)
        }
    }

    @Test func theOperationAndItsTaskAreReleasedOnceTheyFinish() async throws {
        try await withTestLoop { loop in
            let deaths = Recorder<DeinitSpy.Death>()
            let promise: StdPromise<Int>
            do {
                let spy = DeinitSpy("operation", reportingTo: deaths)
                promise = StdPromise<Int>(executorPreference: loop) {
                    spy.touch()
                    return 1
                }
            }
            #expect(deaths.values.isEmpty)
            loop.run()
            #expect(promise.result?.value == 1)
            // The task finished; the only reference to the operation was the task's.
            let released = await eventually { deaths.count == 1 }
            #expect(released)
        }
    }
}
