import Dispatch
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `.nowOr(_:)` and the `PromiseContext.isExecutingNow` matrix (B3, B4, A5; seed README v1.2.0
/// and v1.3.0 notes).
@Suite(".nowOr and isExecutingNow")
struct NowOrAndIsExecutingNowTests {
    typealias IntPromise = Promise<Int, String>

    @Test("isExecutingNow is false by default, on the test thread and on queues (B4)")
    func falseByDefault() async {
        #expect(!PromiseContext.isExecutingNow)
        let queue = makeTaggedQueue("nowOr.default")
        let seen = Recorder<Bool>()
        queue.async { seen.record(PromiseContext.isExecutingNow) }
        DispatchQueue.main.async { seen.record(PromiseContext.isExecutingNow) }
        await drain(queue)
        await drain(DispatchQueue.main)
        #expect(seen.values == [false, false])
    }

    @Test(".nowOr on a resolved promise runs inline with isExecutingNow, then restores it (B3)")
    func synchronousTriggerRunsInline() {
        let seen = Recorder<String>()
        let queue = makeTaggedQueue("nowOr.unused")
        let child = IntPromise(fulfilled: 1).map(on: .nowOr(.queue(queue))) { value -> Int in
            seen.record("callback now=\(PromiseContext.isExecutingNow) queue=\(currentQueueTag ?? "-")")
            return value + 1
        }
        seen.record("returned now=\(PromiseContext.isExecutingNow)")
        #expect(seen.values == ["callback now=true queue=-", "returned now=false"])
        #expect(child.result == .value(2))
    }

    @Test(".nowOr on a pending promise behaves like the wrapped context, with isExecutingNow false (B3)")
    func asynchronousTriggerUsesWrappedContext() async {
        let queue = makeTaggedQueue("nowOr.wrapped")
        let (promise, resolver) = IntPromise.makeWithResolver()
        let child = promise.map(on: .nowOr(.queue(queue))) { _ in
            "now=\(PromiseContext.isExecutingNow) queue=\(currentQueueTag ?? "-")"
        }
        resolver.fulfill(with: 1)
        #expect(await waitForResult(child) == .value("now=false queue=nowOr.wrapped"))
    }

    @Test(".nowOr(.immediate) on a pending promise runs on the resolving thread with isExecutingNow false (B3)")
    func asynchronousTriggerWithImmediate() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let child = promise.map(on: .nowOr(.immediate)) { _ in
            "now=\(PromiseContext.isExecutingNow) queue=\(currentQueueTag ?? "-")"
        }
        let queue = makeTaggedQueue("nowOr.resolver")
        queue.async { resolver.fulfill(with: 1) }
        #expect(await waitForResult(child) == .value("now=false queue=nowOr.resolver"))
    }

    @Test(
        ".immediate with a synchronous trigger inherits the flag: false outside, true inside a synchronous .nowOr (B4)")
    func immediateSynchronousInherits() {
        let seen = Recorder<String>()
        _ = IntPromise(fulfilled: 1).then(on: .immediate) { _ in seen.record("outside \(PromiseContext.isExecutingNow)")
        }
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in
            _ = IntPromise(fulfilled: 2).then(on: .immediate) { _ in
                seen.record("nested then \(PromiseContext.isExecutingNow)")
            }
            _ = IntPromise(on: .immediate) { resolver in
                seen.record("nested init \(PromiseContext.isExecutingNow)")
                resolver.fulfill(with: 3)
            }
        }
        #expect(seen.values == ["outside false", "nested then true", "nested init true"])
    }

    @Test(".immediate with an asynchronous trigger forces the flag false, then restores it (B4)")
    func immediateAsynchronousForcesFalse() {
        let seen = Recorder<String>()
        let (pending, pendingResolver) = IntPromise.makeWithResolver()
        pending.tap(on: .immediate) { _ in seen.record("observer \(PromiseContext.isExecutingNow)") }
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in
            seen.record("before \(PromiseContext.isExecutingNow)")
            pendingResolver.fulfill(with: 1)
            seen.record("after \(PromiseContext.isExecutingNow)")
        }
        #expect(seen.values == ["before true", "observer false", "after true"])
    }

    @Test(
        "derived .immediate callbacks fired by a resolution see the flag false, each link of a chain, then it is restored (B4)"
    )
    func derivedImmediateCallbacksOnAsynchronousTriggerSeeFalse() {
        let seen = Recorder<String>()
        let (pending, pendingResolver) = IntPromise.makeWithResolver()
        // A `map` chain (the second link fires from the drain the first one fills), `then`,
        // `flatMap` (its adopting step included) and `recover`: each kind a derived box runs.
        let chain = pending.map(on: .immediate) { value -> Int in
            seen.record("map1 \(PromiseContext.isExecutingNow)")
            return value + 1
        }.map(on: .immediate) { value -> Int in
            seen.record("map2 \(PromiseContext.isExecutingNow)")
            return value + 1
        }
        _ = pending.then(on: .immediate) { _ in seen.record("then \(PromiseContext.isExecutingNow)") }
        let adopted = pending.flatMap(on: .immediate) { value -> IntPromise in
            seen.record("flatMap \(PromiseContext.isExecutingNow)")
            return IntPromise(fulfilled: value * 10)
        }.map(on: .immediate) { value -> Int in
            seen.record("after flatMap \(PromiseContext.isExecutingNow)")
            return value
        }
        let recovered = pending.recover(on: .immediate) { _ -> Int in 0 }.map(on: .immediate) { value -> Int in
            seen.record("after recover \(PromiseContext.isExecutingNow)")
            return value
        }
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in
            seen.record("before \(PromiseContext.isExecutingNow)")
            pendingResolver.fulfill(with: 1)
            seen.record("after \(PromiseContext.isExecutingNow)")
        }
        #expect(
            seen.values == [
                // J2: a link's callbacks run as soon as it resolves, before the next callback of `pending`.
                "before true", "map1 false", "map2 false", "then false", "flatMap false", "after flatMap false",
                "after recover false", "after true",
            ])
        #expect(chain.result == .value(3))
        #expect(adopted.result == .value(10))
        #expect(recovered.result == .value(1))
    }

    @Test("nested synchronous .nowOr callbacks restore the outer flag (B3)")
    func nestedNowOrRestores() {
        let seen = Recorder<String>()
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in
            _ = IntPromise(fulfilled: 2).then(on: .nowOr(.main)) { _ in
                seen.record("inner \(PromiseContext.isExecutingNow)")
            }
            seen.record("outer \(PromiseContext.isExecutingNow)")
        }
        seen.record("after \(PromiseContext.isExecutingNow)")
        #expect(seen.values == ["inner true", "outer true", "after false"])
    }

    @Test("Promise(on: .nowOr(x)) runs its handler inline with isExecutingNow true (A5)")
    func promiseInitWithNowOrIsInline() {
        let seen = Recorder<String>()
        let queue = makeTaggedQueue("nowOr.init")
        let promise = IntPromise(on: .nowOr(.queue(queue))) { resolver in
            seen.record("handler now=\(PromiseContext.isExecutingNow) queue=\(currentQueueTag ?? "-")")
            resolver.fulfill(with: 1)
        }
        seen.record("returned now=\(PromiseContext.isExecutingNow)")
        #expect(seen.values == ["handler now=true queue=-", "returned now=false"])
        #expect(promise.result == .value(1))
    }

    @Test("Promise(on: .immediate) outside any callback sees isExecutingNow false (A5)")
    func promiseInitWithImmediateOutside() {
        let seen = Recorder<Bool>()
        _ = IntPromise(on: .immediate) { resolver in
            seen.record(PromiseContext.isExecutingNow)
            resolver.fulfill(with: 1)
        }
        #expect(seen.values == [false])
    }

    @Test("asynchronous contexts run with isExecutingNow false, even when registered inside a synchronous .nowOr (B4)")
    func asynchronousContextsRunWithFlagFalse() async {
        let queue = makeTaggedQueue("nowOr.async")
        let result = Locked<Promise<Bool, String>?>(nil)
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in
            result.value = IntPromise(fulfilled: 2).map(on: .queue(queue)) { _ in PromiseContext.isExecutingNow }
        }
        let child = result.value
        #expect(child != nil, "the nowOr callback did not run inline")
        if let child {
            let result = await waitForResult(child)
            #expect(result == .value(false))
        }
    }

    @Test("onRequestCancel(.immediate) handlers inherit the requesting thread's flag (B4)")
    func requestCancelHandlerInheritsFlag() {
        let seen = Recorder<String>()
        let (outside, outsideResolver) = IntPromise.makeWithResolver()
        outsideResolver.onRequestCancel(on: .immediate) { _ in seen.record("outside \(PromiseContext.isExecutingNow)") }
        outside.requestCancel()

        let (inside, insideResolver) = IntPromise.makeWithResolver()
        insideResolver.onRequestCancel(on: .immediate) { _ in seen.record("inside \(PromiseContext.isExecutingNow)") }
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in inside.requestCancel() }
        #expect(seen.values == ["outside false", "inside true"])
    }

    @Test("the flag is per thread: a synchronous .nowOr on one thread does not leak to another (B4)")
    func flagIsThreadLocal() async {
        let queue = makeTaggedQueue("nowOr.otherThread")
        let seen = Recorder<Bool>()
        _ = IntPromise(fulfilled: 1).then(on: .nowOr(.main)) { _ in
            // `queue.sync` may run the block on this very thread, so hop with async and wait.
            let done = DispatchSemaphore(value: 0)
            queue.async {
                seen.record(PromiseContext.isExecutingNow)
                done.signal()
            }
            done.wait()
            seen.record(PromiseContext.isExecutingNow)
        }
        #expect(seen.values == [false, true])
    }
}
