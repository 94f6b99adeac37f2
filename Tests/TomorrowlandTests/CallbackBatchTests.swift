import Testing
import TomorrowlandTestSupport
import TomorrowlandTesting

@testable import Tomorrowland

/// Callbacks of one resolution bound for one serial loop go to it as one ready entry
/// (`PromiseJobBatch`): what that may not change (order, tokens, other work on the loop) and what it
/// saves (ready entries).
@Suite("Callbacks batched for one loop")
struct CallbackBatchTests {
    @Test("taps of one resolution on a loop take one ready entry and run in registration order")
    func tapsTakeOneReadyEntryAndRunInOrder() throws {
        try withTestLoop { loop in
            let log = Recorder<Int>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            for index in 0..<5 {
                promise.tap(on: .loop(loop)) { result in log.record(index * 100 + (result.value ?? -1)) }
            }
            resolver.fulfill(with: 7)
            #expect(loop.readyCount == 1)
            #expect(log.values.isEmpty, "callbacks never run inside the resolving call")
            loop.run()
            #expect(log.values == [7, 107, 207, 307, 407])
        }
    }

    @Test("a batch runs after the work queued before the resolution and before the work queued after it")
    func batchKeepsItsPlaceAmongOtherWork() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .loop(loop)) { _ in log.record("a") }
            promise.tap(on: .loop(loop)) { _ in log.record("b") }
            loop.submit { log.record("before") }
            resolver.fulfill(with: 1)
            loop.submit { log.record("after") }
            loop.run()
            #expect(log.values == ["before", "a", "b", "after"])
        }
    }

    @Test("work that a callback between batched ones submits to the loop runs between them")
    func immediateCallbackSplitsTheBatch() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .loop(loop)) { _ in log.record("a") }
            promise.tap(on: .loop(loop)) { _ in log.record("b") }
            promise.tap(on: .immediate) { _ in loop.submit { log.record("submitted") } }
            promise.tap(on: .loop(loop)) { _ in log.record("c") }
            promise.tap(on: .loop(loop)) { _ in log.record("d") }
            resolver.fulfill(with: 1)
            #expect(loop.readyCount == 3, "[a, b], the submitted closure, [c, d]")
            loop.run()
            #expect(log.values == ["a", "b", "submitted", "c", "d"])
        }
    }

    @Test("a map between taps on the same loop keeps its place in registration order")
    func mapBetweenTapsKeepsItsPlace() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .loop(loop)) { _ in log.record("a") }
            promise.tap(on: .loop(loop)) { _ in log.record("b") }
            let mapped = promise.map(on: .loop(loop)) { value -> Int in
                log.record("map")
                return value + 1
            }
            promise.tap(on: .loop(loop)) { _ in log.record("c") }
            resolver.fulfill(with: 1)
            loop.run()
            #expect(log.values == ["a", "b", "map", "c"])
            #expect(mapped.result == .value(2))
        }
    }

    @Test("taps bound for two loops run on their own loop, each in registration order")
    func tapsOnTwoLoopsStayApart() throws {
        try withTestLoop { first in
            try withTestLoop { second in
                let log = Recorder<String>()
                let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                promise.tap(on: .loop(first)) { _ in log.record("first 1") }
                promise.tap(on: .loop(first)) { _ in log.record("first 2") }
                promise.tap(on: .loop(second)) { _ in log.record("second 1") }
                promise.tap(on: .loop(second)) { _ in log.record("second 2") }
                promise.tap(on: .loop(first)) { _ in log.record("first 3") }
                resolver.fulfill(with: 1)
                #expect(first.readyCount == 2)
                #expect(second.readyCount == 1)
                second.run()
                #expect(log.values == ["second 1", "second 2"])
                first.run()
                #expect(log.values == ["second 1", "second 2", "first 1", "first 2", "first 3"])
            }
        }
    }

    @Test("invalidating the token of one batched tap suppresses that tap only")
    func invalidatedTokenSuppressesOneTapOnly() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .loop(loop)) { _ in log.record("a") }
            promise.tap(on: .loop(loop), token: token) { _ in log.record("guarded") }
            promise.tap(on: .loop(loop)) { _ in log.record("c") }
            resolver.fulfill(with: 1)
            token.invalidate()
            loop.run()
            #expect(log.values == ["a", "c"])
        }
    }

    @Test("a batched tap that invalidates a later tap's token suppresses it, as separate entries would")
    func batchedTapInvalidatesALaterOne() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let token = PromiseInvalidationToken(invalidateOnDeinit: false)
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .loop(loop)) { _ in
                log.record("a")
                token.invalidate()
            }
            promise.tap(on: .loop(loop), token: token) { _ in log.record("guarded") }
            promise.tap(on: .loop(loop)) { _ in log.record("c") }
            resolver.fulfill(with: 1)
            loop.run()
            #expect(log.values == ["a", "c"])
        }
    }

    @Test("batched taps on a loop that was shut down are released without running")
    func batchOnAShutDownLoopIsReleasedUnrun() throws {
        let loop = TestLoop()
        let deaths = Recorder<DeinitSpy.Death>()
        let ran = Recorder<Int>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        for index in 0..<3 {
            let spy = DeinitSpy("tap \(index)", reportingTo: deaths)
            promise.tap(on: .loop(loop)) { _ in
                spy.touch()
                ran.record(index)
            }
        }
        loop.shutdown()
        resolver.fulfill(with: 1)
        #expect(ran.values.isEmpty)
        #expect(deaths.values.map(\.name) == ["tap 0", "tap 1", "tap 2"])
        try loop.checkNoPendingWork()
    }

    @Test("taps on an executor that is not serial are not batched: one job each")
    func tapsOnANonSerialExecutorAreNotBatched() {
        let executor = ManualJobExecutor()
        let log = Recorder<Int>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        for index in 0..<3 {
            promise.tap(on: .executor(executor)) { _ in log.record(index) }
        }
        resolver.fulfill(with: 1)
        #expect(executor.pendingCount == 3)
        executor.runPending()
        #expect(log.values == [0, 1, 2])
    }

    @Test("after taps on an executor that is not serial, the later taps on a loop are still batched")
    func nonSerialExecutorDoesNotStopLaterBatches() throws {
        try withTestLoop { loop in
            let executor = ManualJobExecutor()
            let log = Recorder<String>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .executor(executor)) { _ in log.record("manual 1") }
            promise.tap(on: .executor(executor)) { _ in log.record("manual 2") }
            promise.tap(on: .loop(loop)) { _ in log.record("loop 1") }
            promise.tap(on: .loop(loop)) { _ in log.record("loop 2") }
            promise.tap(on: .executor(executor)) { _ in log.record("manual 3") }
            promise.tap(on: .loop(loop)) { _ in log.record("loop 3") }
            promise.tap(on: .loop(loop)) { _ in log.record("loop 4") }
            resolver.fulfill(with: 1)
            #expect(executor.pendingCount == 3)
            #expect(loop.readyCount == 2)
            executor.runPending()
            loop.run()
            #expect(log.values == ["manual 1", "manual 2", "manual 3", "loop 1", "loop 2", "loop 3", "loop 4"])
        }
    }
}
