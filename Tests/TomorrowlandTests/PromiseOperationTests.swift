import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("PromiseOperation")
struct PromiseOperationTests {
    @Test func thePromiseIsAvailableAtOnceAndPendingUntilTheOperationStarts() {
        let events = Recorder<String>()
        let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
            events.record("handler")
            resolver.fulfill(with: 1)
        }
        #expect(operation.isAsynchronous)
        #expect(operation.promise == operation.promise)
        #expect(operation.promise.result == nil)
        #expect(events.values.isEmpty)
        #expect(!operation.isExecuting && !operation.isFinished)
        operation.start()
        #expect(events.values == ["handler"])
        #expect(operation.promise.result == .value(1))
        #expect(operation.isFinished && !operation.isExecuting)
    }

    @Test func theOperationExecutesUntilThePromiseResolvesNotUntilTheHandlerReturns() throws {
        try withTestLoop { loop in
            let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
                loop.submit { resolver.fulfill(with: 2) }
            }
            operation.start()
            #expect(operation.isExecuting && !operation.isFinished)
            loop.run()
            #expect(operation.isFinished && !operation.isExecuting)
            #expect(operation.promise.result == .value(2))
        }
    }

    @Test func theOperationIsFinishedBeforeAnyOtherObserverRuns() {
        let seen = Recorder<String>()
        let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
            resolver.fulfill(with: 1)
        }
        operation.promise.tap(on: .immediate) { [unowned operation] _ in
            seen.record("finished \(operation.isFinished), executing \(operation.isExecuting)")
        }
        operation.start()
        #expect(seen.values == ["finished true, executing false"])
    }

    @Test func startingTwiceRunsTheHandlerOnce() {
        let runs = Atomic<Int>(0)
        let operation = PromiseOperation<Int, String>(on: .immediate) { _ in runs.add(1, ordering: .relaxed) }
        operation.start()
        operation.start()
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test func theHandlerRunsOnTheContextWithAnAsynchronousTrigger() throws {
        try withTestLoop { loop in
            let events = Recorder<String>()
            let operation = PromiseOperation<Int, String>(on: .nowOr(.loop(loop))) { resolver in
                events.record("handler")
                resolver.fulfill(with: 3)
            }
            operation.start()
            #expect(events.values.isEmpty)
            loop.run()
            #expect(events.values == ["handler"])
            #expect(operation.isFinished)
        }
    }

    @Test func aCancelBeforeTheStartLeavesThePromisePendingUntilTheStartThenCancelsItWithoutRunningTheHandler() {
        let events = Recorder<String>()
        let operation = PromiseOperation<Int, String>(on: .immediate) { _ in events.record("handler") }
        operation.cancel()
        #expect(operation.isCancelled)
        #expect(operation.promise.result == nil)
        operation.start()
        #expect(operation.promise.result == .cancelled)
        #expect(operation.isFinished)
        #expect(events.values.isEmpty)
    }

    @Test func aCancelRequestOnThePromiseCancelsTheOperation() {
        let operation = PromiseOperation<Int, String>(on: .immediate) { _ in }
        operation.promise.requestCancel()
        #expect(operation.isCancelled)
    }

    @Test func aCancelWhileRunningReachesTheHandlersCancelHandler() {
        let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
            resolver.onRequestCancel(on: .immediate) { $0.cancel() }
        }
        operation.start()
        #expect(operation.promise.result == nil)
        operation.cancel()
        #expect(operation.promise.result == .cancelled)
        #expect(operation.isFinished)
    }

    @Test func droppingAnOperationThatNeverStartedCancelsThePromise() {
        let events = Recorder<String>()
        var promise: Promise<Int, String>?
        do {
            let operation = PromiseOperation<Int, String>(on: .immediate) { _ in events.record("handler") }
            promise = operation.promise
        }
        #expect(promise?.result == .cancelled)
        #expect(events.values.isEmpty)
    }

    @Test func theHandlerIsReleasedAfterItRuns() {
        var payload: TimeTestPayload? = TimeTestPayload(1)
        let watch = WeakReference(payload!)
        let operation = PromiseOperation<Int, String>(on: .immediate) { [payload] resolver in
            resolver.fulfill(with: payload!.number)
        }
        payload = nil
        #expect(watch.object != nil)
        operation.start()
        #expect(watch.object == nil)
    }

    @Test func onAQueueDependantsWaitForThePromiseNotForTheHandler() {
        let queue = OperationQueue()
        let events = Recorder<String>()
        let resolverSlot = Locked<Promise<Int, String>.Resolver?>(nil)
        let first = PromiseOperation<Int, String>(on: .immediate) { resolver in
            resolverSlot.withLock { $0 = resolver }
            events.record("handler returned")
        }
        let second = BlockOperation { events.record("dependant") }
        second.addDependency(first)
        queue.addOperations([first, second], waitUntilFinished: false)
        #expect(waitUntil { events.values == ["handler returned"] })
        // Real time is the point: the queue must not run the dependant while the promise waits.
        usleep(100_000)
        #expect(events.values == ["handler returned"])
        #expect(first.isExecuting)
        resolverSlot.withLock { $0?.fulfill(with: 1) }
        queue.waitUntilAllOperationsAreFinished()
        #expect(events.values == ["handler returned", "dependant"])
        #expect(first.promise.result == .value(1))
    }

    @Test func aCancelRacingTheStartEitherPreventsTheHandlerOrReachesIt() {
        for _ in 0..<300 {
            let ran = Atomic<Int>(0)
            let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
                ran.add(1, ordering: .relaxed)
                resolver.onRequestCancel(on: .immediate) { $0.cancel() }
            }
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 { operation.start() } else { operation.cancel() }
            }
            // Either way the promise ends cancelled and the handler ran at most once.
            #expect(blockingResult(of: operation.promise) == .cancelled)
            #expect(ran.load(ordering: .relaxed) <= 1)
            #expect(operation.isFinished)
        }
    }

    @Test func aCancelOfAnOperationWaitingOnADependencyKeepsTheHandlerFromRunning() {
        // Operation.cancel() makes the waiting operation ready inside super.cancel(); the queue
        // may start it before PromiseOperation.cancel() requests cancellation on the promise (the
        // handler ran in 78 of 300 before `start()` also checked `isCancelled`).
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        let ran = Atomic<Int>(0)
        var operations: [PromiseOperation<Int, String>] = []
        for _ in 0..<300 {
            let never = BlockOperation {}
            let operation = PromiseOperation<Int, String>(on: .immediate) { resolver in
                ran.add(1, ordering: .relaxed)
                resolver.fulfill(with: 1)
            }
            operation.addDependency(never)
            queue.addOperation(operation)
            operations.append(operation)
        }
        for operation in operations { operation.cancel() }
        queue.waitUntilAllOperationsAreFinished()
        #expect(ran.load(ordering: .relaxed) == 0)
        for operation in operations {
            #expect(blockingResult(of: operation.promise) == .cancelled)
        }
    }

    @Test func aQueueStartsACancelledOperationAndThePromiseIsCancelled() {
        let queue = OperationQueue()
        queue.isSuspended = true
        let events = Recorder<String>()
        let operation = PromiseOperation<Int, String>(on: .immediate) { _ in events.record("handler") }
        queue.addOperation(operation)
        operation.cancel()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(operation.promise.result == .cancelled)
        #expect(events.values.isEmpty)
    }
}
