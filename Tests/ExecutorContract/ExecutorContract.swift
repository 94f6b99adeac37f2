import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// The executor contract: what every ``PromiseExecutor`` does, written once and run against each
/// executor (event loops, test loops, Dispatch and `OperationQueue` contexts, NIO loops, a
/// user-written executor) by thin `@Test` wrappers in each test target:
///
/// ```swift
/// @Test(arguments: Subjects.allCases, ExecutorContract.allCases)
/// func executorContract(subject: Subjects, check: ExecutorContract) {
///     check.verify(subject.make())
/// }
/// ```
///
/// Each case is one check, named after the behaviour it requires.
public enum ExecutorContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case submittedWorkRunsInSubmissionOrder
    case workSubmittedFromInsideWorkRunsAfterItNeverInside
    case promiseCallbacksTriggeredInsideWorkRunAfterIt
    case timersRunInDeadlineOrderEqualDelaysInSchedulingOrder
    case cancelledTimersNeverRunAndTheirWorkIsReleased
    case isCurrentIsTrueInsideWorkAndFalseElsewhere
    case workFromOtherThreadsRunsInEachThreadsOrder
    case timeoutDelayAndAfterRunOnTheExecutorsClock
    case callbacksOfEveryFamilyRunOnTheExecutor

    public var testDescription: String { rawValue }

    /// Runs this check against `subject`, recording failures with `#expect`, then tears the
    /// subject down.
    public func verify(_ subject: some ExecutorUnderTest) {
        defer { subject.tearDown() }
        switch self {
        case .submittedWorkRunsInSubmissionOrder: Self.checkFIFO(subject)
        case .workSubmittedFromInsideWorkRunsAfterItNeverInside: Self.checkNoReentrancy(subject)
        case .promiseCallbacksTriggeredInsideWorkRunAfterIt: Self.checkPromiseJobs(subject)
        case .timersRunInDeadlineOrderEqualDelaysInSchedulingOrder: Self.checkTimerOrder(subject)
        case .cancelledTimersNeverRunAndTheirWorkIsReleased: Self.checkTimerCancellation(subject)
        case .isCurrentIsTrueInsideWorkAndFalseElsewhere: Self.checkIsCurrent(subject)
        case .workFromOtherThreadsRunsInEachThreadsOrder: Self.checkOtherThreads(subject)
        case .timeoutDelayAndAfterRunOnTheExecutorsClock: Self.checkTimedPromises(subject)
        case .callbacksOfEveryFamilyRunOnTheExecutor: Self.checkCallbackFamilies(subject)
        }
    }

    // MARK: - The checks

    static func checkFIFO(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let log = Recorder<Int>()
        for index in 0..<200 {
            executor.submit { log.record(index) }
        }
        #expect(subject.drive { log.count == 200 })
        if subject.isSerial {
            #expect(log.values == Array(0..<200))
        } else {
            #expect(log.values.sorted() == Array(0..<200))
        }
    }

    static func checkNoReentrancy(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        // (event, thread, whether the outer work had returned from `submit`)
        let log = Recorder<(event: String, thread: pthread_t, outerReturned: Bool)>()
        let outerReturned = Recorder<Bool>()
        executor.submit {
            log.record(("outer start", pthread_self(), false))
            executor.submit {
                log.record(("inner", pthread_self(), !outerReturned.values.isEmpty))
            }
            outerReturned.record(true)
            log.record(("outer end", pthread_self(), true))
        }
        #expect(subject.drive { log.count == 3 })
        let values = log.values
        if subject.isSerial {
            #expect(values.map(\.event) == ["outer start", "outer end", "inner"])
        }
        guard let outer = values.first(where: { $0.event == "outer start" }),
            let inner = values.first(where: { $0.event == "inner" })
        else { return }
        let ranInline = pthread_equal(outer.thread, inner.thread) != 0 && !inner.outerReturned
        #expect(!ranInline, "work submitted from inside work ran inside the submit call")
    }

    static func checkPromiseJobs(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let context = PromiseContext.executor(executor)
        let log = Recorder<String>()
        let outerReturned = Recorder<Bool>()
        executor.submit {
            // Callbacks triggered by a resolution inside work go through `submit(job:)`.
            let (promise, resolver) = Promise<Int, ContractError>.makeWithResolver()
            _ = promise.map(on: context) { value in
                log.record("map \(value) after return \(!outerReturned.values.isEmpty)")
            }
            _ = promise.then(on: context) { value in
                log.record("then \(value) after return \(!outerReturned.values.isEmpty)")
            }
            resolver.fulfill(with: 1)
            // Registering on a resolved promise dispatches too.
            promise.always(on: context) { _ in
                log.record("always after return \(!outerReturned.values.isEmpty)")
            }
            outerReturned.record(true)
            log.record("outer end")
        }
        #expect(subject.drive { log.count == 4 })
        if subject.isSerial {
            #expect(
                log.values == [
                    "outer end", "map 1 after return true", "then 1 after return true", "always after return true",
                ])
        } else {
            #expect(Set(log.values).count == 4)
        }
    }

    static func checkTimerOrder(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let log = Recorder<String>()
        let current = Recorder<Bool>()
        func timer(_ name: String, _ milliseconds: Int) {
            _ = executor.schedule(after: .milliseconds(milliseconds)) {
                current.record(executor.isCurrent)
                log.record(name)
            }
        }
        timer("30 ms", 30)
        timer("10 ms", 10)
        timer("20 ms (first)", 20)
        timer("20 ms (second)", 20)
        timer("20 ms (third)", 20)
        #expect(subject.drive { log.count == 5 })
        let expected = ["10 ms", "20 ms (first)", "20 ms (second)", "20 ms (third)", "30 ms"]
        if subject.isSerial {
            #expect(log.values == expected)
        } else {
            #expect(log.values.sorted() == expected.sorted())
        }
        #expect(current.values.allSatisfy { $0 }, "a timer ran where isCurrent is false")
    }

    static func checkTimerCancellation(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let log = Recorder<String>()
        // Cancelled from the test's thread, before its deadline.
        var offExecutor: ReleaseMarker? = ReleaseMarker()
        let offExecutorWatch = WeakReference(offExecutor!)
        let offHandle = executor.schedule(after: .milliseconds(20)) { [offExecutor] in
            withExtendedLifetime(offExecutor) { log.record("timer cancelled off the executor ran") }
        }
        offExecutor = nil
        offHandle.cancel()
        offHandle.cancel()  // A second cancel does nothing.
        // Cancelled from inside the executor's work.
        let onExecutorWatch = Recorder<WeakReference<ReleaseMarker>>()
        executor.submit {
            let marker = ReleaseMarker()
            onExecutorWatch.record(WeakReference(marker))
            let handle = executor.schedule(after: .milliseconds(10)) {
                withExtendedLifetime(marker) { log.record("timer cancelled on the executor ran") }
            }
            handle.cancel()
        }
        // A later timer: once it ran, the cancelled ones are past their deadlines.
        _ = executor.schedule(after: .milliseconds(40)) { log.record("sentinel") }
        #expect(subject.drive { log.values.contains("sentinel") })
        let released = subject.drive {
            offExecutorWatch.isReleased && onExecutorWatch.values.allSatisfy(\.isReleased)
                && onExecutorWatch.count == 1
        }
        #expect(released, "a cancelled timer's work was not released by its deadline")
        #expect(log.values == ["sentinel"])
    }

    static func checkIsCurrent(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let inside = Recorder<String>()
        executor.submit {
            inside.record("submitted work: \(executor.isCurrent)")
            if subject.acceptsOtherThreads {
                // While this work runs, another thread is not running it.
                let elsewhere = onAnotherThread { executor.isCurrent }
                inside.record("another thread meanwhile: \(elsewhere)")
            }
        }
        _ = executor.schedule(after: .milliseconds(1)) {
            inside.record("timer: \(executor.isCurrent)")
        }
        let expectedCount = subject.acceptsOtherThreads ? 3 : 2
        #expect(subject.drive { inside.count == expectedCount })
        #expect(inside.values.contains("submitted work: true"))
        #expect(inside.values.contains("timer: true"))
        if subject.acceptsOtherThreads {
            #expect(inside.values.contains("another thread meanwhile: false"))
            #expect(!onAnotherThread { executor.isCurrent })
        }
        if subject.isCurrentOnlyInsideWork {
            #expect(!executor.isCurrent)
        }
    }

    static func checkOtherThreads(_ subject: some ExecutorUnderTest) {
        guard subject.acceptsOtherThreads else { return }
        let executor = subject.executor
        let log = Recorder<(thread: Int, index: Int)>()
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            Thread {
                for index in 0..<50 {
                    executor.submit { log.record((thread, index)) }
                }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(subject.drive { log.count == 200 })
        for thread in 0..<4 {
            let indices = log.values.filter { $0.thread == thread }.map(\.index)
            if subject.isSerial {
                #expect(indices == Array(0..<50), "thread \(thread)'s work ran out of its order")
            } else {
                #expect(indices.sorted() == Array(0..<50))
            }
        }
    }

    static func checkTimedPromises(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let context = PromiseContext.executor(executor)
        // (what, elapsed on the executor's clock, isCurrent, outcome)
        let log = Recorder<(what: String, elapsed: Duration, current: Bool, outcome: String)>()
        let start = subject.now
        let (pending, resolver) = Promise<Int, ContractError>.makeWithResolver()
        pending.timeout(on: context, delay: .milliseconds(20)).always(on: context) { result in
            let outcome: String
            if case .error(.timedOut) = result { outcome = "timed out" } else { outcome = "\(result)" }
            log.record(("timeout", subject.now - start, executor.isCurrent, outcome))
        }
        Promise<Int, ContractError>(fulfilled: 5).delay(on: context, .milliseconds(20)).always(on: context) { result in
            log.record(("delay", subject.now - start, executor.isCurrent, "\(result.value.map(String.init) ?? "none")"))
        }
        Promise<Int, ContractError>(on: context, fulfilled: 6, after: .milliseconds(20)).always(on: context) { result in
            log.record(("after", subject.now - start, executor.isCurrent, "\(result.value.map(String.init) ?? "none")"))
        }
        #expect(subject.drive { log.count == 3 })
        resolver.cancel()
        let entries = Dictionary(uniqueKeysWithValues: log.values.map { ($0.what, $0) })
        #expect(entries["timeout"]?.outcome == "timed out")
        #expect(entries["delay"]?.outcome == "5")
        #expect(entries["after"]?.outcome == "6")
        for entry in log.values {
            #expect(entry.elapsed >= .milliseconds(20), "\(entry.what) fired early on the executor's clock")
            #expect(entry.current, "\(entry.what)'s callback ran where isCurrent is false")
        }
    }

    static func checkCallbackFamilies(_ subject: some ExecutorUnderTest) {
        let executor = subject.executor
        let context = PromiseContext.executor(executor)
        let log = Recorder<(family: String, current: Bool)>()
        @Sendable func note(_ family: String) { log.record((family, executor.isCurrent)) }

        let value = Promise<Int, ContractError>(fulfilled: 1)
        _ = value.then(on: context) { _ in note("then") }
        value.always(on: context) { _ in note("always") }
        value.tap(on: context) { _ in note("tap") }
        _ = value.map(on: context) { _ in note("map") }
        _ = value.flatMap(on: context) { _ -> Promise<Int, ContractError> in
            note("flatMap")
            return Promise(fulfilled: 2)
        }
        _ = value.mapResult(on: context) { result -> PromiseResult<Int, ContractError> in
            note("mapResult")
            return result
        }
        _ = value.flatMapResult(on: context) { result -> Promise<Int, ContractError> in
            note("flatMapResult")
            return Promise(with: result)
        }
        let standard = Promise<Int, any Error>(fulfilled: 1)
        _ = standard.tryThen(on: context) { _ in note("tryThen") }
        _ = standard.tryMap(on: context) { _ in note("tryMap") }
        _ = standard.tryFlatMap(on: context) { _ -> Promise<Int, ContractError> in
            note("tryFlatMap")
            return Promise(fulfilled: 2)
        }

        let error = Promise<Int, ContractError>(rejected: ContractError())
        error.catch(on: context) { _ in note("catch") }
        _ = error.recover(on: context) { _ in
            note("recover")
            return 0
        }
        _ = error.mapError(on: context) { error in
            note("mapError")
            return error
        }
        _ = error.flatMapError(on: context) { _ -> Promise<Int, ContractError> in
            note("flatMapError")
            return Promise(fulfilled: 0)
        }
        _ = Promise<Int, any Error>(rejected: ContractError()).tryRecover(on: context) { _ in
            note("tryRecover")
            return 0
        }

        let (cancelled, cancelResolver) = Promise<Int, ContractError>.makeWithResolver()
        cancelled.onCancel(on: context) { note("onCancel") }
        cancelResolver.cancel()

        Promise<Int, ContractError>(on: context) { resolver in
            note("init handler")
            resolver.onRequestCancel(on: context) { resolver in
                note("onRequestCancel")
                resolver.cancel()
            }
        }.requestCancel()

        let families = [
            "then", "always", "tap", "map", "flatMap", "mapResult", "flatMapResult", "tryThen", "tryMap", "tryFlatMap",
            "catch", "recover", "mapError", "flatMapError", "tryRecover", "onCancel", "init handler", "onRequestCancel",
        ]
        #expect(subject.drive { log.count == families.count })
        #expect(Set(log.values.map(\.family)) == Set(families))
        for entry in log.values {
            #expect(entry.current, "\(entry.family) ran where isCurrent is false")
        }
    }
}
