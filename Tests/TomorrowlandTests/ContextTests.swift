import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Where callbacks run: each Dispatch context, `.operationQueue`, `.immediate` (B5),
/// `.executor` with a test executor, `.main` chaining (B6), and ordering (B2, J2).
@Suite("Contexts and ordering")
struct ContextTests {
    typealias IntPromise = Promise<Int, String>

    static let qosContexts: [(PromiseContext, DispatchQoS.QoSClass)] = [
        (.background, .background),
        (.utility, .utility),
        (.default, .default),
        (.userInitiated, .userInitiated),
        (.userInteractive, .userInteractive),
    ]

    @Test("each QoS context runs callbacks on the global queue of its class", arguments: 0..<5)
    func qosContextRunsOnGlobalQueue(index: Int) async {
        let (context, qos) = Self.qosContexts[index]
        let (promise, resolver) = IntPromise.makeWithResolver()
        let child = promise.map(on: context) { _ in currentDispatchQueueLabel }
        resolver.fulfill(with: 1)
        #expect(await waitForResult(child) == .value(DispatchQueue.global(qos: qos).label))
    }

    @Test("PromiseContext(qos:) maps each class to its case, and .unspecified to .default")
    func contextFromQoS() {
        for (context, qos) in Self.qosContexts {
            #expect(PromiseContext(qos: qos) == context)
        }
        #expect(PromiseContext(qos: .unspecified) == .default)
    }

    @Test(".queue(q) runs callbacks on q")
    func queueContextRunsOnQueue() async {
        let queue = makeTaggedQueue("context.queue")
        let child = IntPromise(fulfilled: 1).map(on: .queue(queue)) { _ in currentQueueTag }
        #expect(await waitForResult(child) == .value("context.queue"))
    }

    @Test(".operationQueue(q) runs callbacks as operations of q")
    func operationQueueContextRunsOnOperationQueue() async {
        let operationQueue = OperationQueue()
        let child = IntPromise(fulfilled: 1).map(on: .operationQueue(operationQueue)) { _ in
            OperationQueue.current === operationQueue
        }
        #expect(await waitForResult(child) == .value(true))
    }

    @Test(".main runs callbacks on the main queue")
    func mainContextRunsOnMainQueue() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let child = promise.map(on: .main) { _ in currentDispatchQueueLabel }
        resolver.fulfill(with: 1)
        #expect(await waitForResult(child) == .value(DispatchQueue.main.label))
    }

    @Test(".auto is .default off the main queue and is evaluated where it is read")
    func autoContext() async {
        let queue = makeTaggedQueue("context.auto")
        let seen = Recorder<Bool>()
        queue.async { seen.record(PromiseContext.auto == .default) }
        await drain(queue)
        #expect(seen.values == [true])
        #expect(PromiseContext.auto == (Thread.isMainThread ? .main : .default))
    }

    @Test("callbacks of the default-context methods run asynchronously off the registering thread")
    func defaultContextIsAsynchronous() async {
        let queue = makeTaggedQueue("context.defaultArgument")
        let ran = Recorder<String?>()
        let done = Locked<IntPromise?>(nil)
        queue.async {
            done.value = IntPromise(fulfilled: 1).then { _ in ran.record(currentQueueTag) }
            ran.record("registered")
        }
        await drain(queue)
        let child = done.value
        #expect(child != nil, "no child")
        if let child {
            let result = await waitForResult(child)
            #expect(result == .value(1))
        }
        // `.auto` off the main thread is a global queue: never the registering queue, never inline
        // (inline would record the registering queue's tag). The global queue may run the
        // callback before or after the registering block records "registered".
        #expect(ran.values.count == 2)
        #expect(ran.values.contains("registered"))
        #expect(ran.values.contains(nil), "the callback ran on a tagged queue: \(ran.values)")
    }

    // MARK: Contract shared by every asynchronous context

    enum AsynchronousContext: String, CaseIterable, Sendable {
        case main, background, utility, `default`, userInitiated, userInteractive, queue, operationQueue, executor

        func make() -> PromiseContext {
            switch self {
            case .main: .main
            case .background: .background
            case .utility: .utility
            case .default: .default
            case .userInitiated: .userInitiated
            case .userInteractive: .userInteractive
            case .queue: .queue(makeTaggedQueue("context.contract"))
            case .operationQueue: .operationQueue(OperationQueue())
            case .executor: .executor(SerialQueueExecutor(tag: "context.contract.executor"))
            }
        }
    }

    @Test(
        "an asynchronous context never runs a callback inside the registering call, even on a resolved promise (B1)",
        arguments: AsynchronousContext.allCases)
    func asynchronousContextsNeverRunInline(kind: AsynchronousContext) async {
        let context = kind.make()
        let registeringThread = currentThreadID()
        let registering = Locked(true)
        let ranInline = Recorder<Bool>()
        let child = IntPromise(fulfilled: 1).map(on: context) { value -> Int in
            ranInline.record(registering.value && currentThreadID() == registeringThread)
            return value + 1
        }
        registering.value = false
        #expect(await waitForResult(child) == .value(2))
        #expect(ranInline.values == [false])
    }

    // MARK: B5: .immediate

    @Test(".immediate on a resolved promise runs on the registering thread, before registration returns (B5)")
    func immediateOnResolvedPromiseRunsOnRegisteringThread() async {
        let queue = makeTaggedQueue("context.register")
        let ran = Recorder<String>()
        queue.async {
            _ = IntPromise(fulfilled: 1).then(on: .immediate) { _ in ran.record("callback on \(currentQueueTag ?? "-")")
            }
            ran.record("returned")
        }
        await drain(queue)
        #expect(ran.values == ["callback on context.register", "returned"])
    }

    @Test(".immediate on a pending promise runs on the resolving thread (B5)")
    func immediateOnPendingPromiseRunsOnResolvingThread() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let child = promise.map(on: .immediate) { _ in currentQueueTag }
        let queue = makeTaggedQueue("context.resolve")
        queue.async { resolver.fulfill(with: 1) }
        #expect(await waitForResult(child) == .value("context.resolve"))
    }

    @Test("onRequestCancel(on: .immediate) runs on the thread that requests cancellation (B5)")
    func immediateRequestCancelHandlerRunsOnRequestingThread() async {
        let (promise, resolver) = IntPromise.makeWithResolver()
        let seen = Recorder<String?>()
        resolver.onRequestCancel(on: .immediate) { _ in seen.record(currentQueueTag) }
        let queue = makeTaggedQueue("context.request")
        queue.async { promise.requestCancel() }
        await drain(queue)
        #expect(seen.values == ["context.request"])
    }

    // MARK: .executor

    @Test(".executor(e) runs callbacks through e.submit, on e, where e.isCurrent holds")
    func executorContextUsesSubmit() async {
        let executor = SerialQueueExecutor(tag: "context.executor")
        let (promise, resolver) = IntPromise.makeWithResolver()
        let first = promise.map(on: .executor(executor)) { _ in
            "\(currentQueueTag ?? "-") current=\(executor.isCurrent)"
        }
        let second = IntPromise(fulfilled: 2).map(on: .executor(executor)) { _ in executor.isCurrent }
        #expect(!executor.isCurrent)
        resolver.fulfill(with: 1)
        #expect(await waitForResult(first) == .value("context.executor current=true"))
        #expect(await waitForResult(second) == .value(true))
        #expect(executor.submitCount == 2)
    }

    @Test("Promise(on: .executor(e)) runs its handler on e")
    func executorContextRunsHandler() async {
        let executor = SerialQueueExecutor(tag: "context.executorHandler")
        let promise = IntPromise(on: .executor(executor)) { resolver in
            resolver.fulfill(with: executor.isCurrent ? 1 : 0)
        }
        #expect(await waitForResult(promise) == .value(1))
        #expect(executor.submitCount >= 1)
    }

    @Test("contexts compare by case and by queue or executor identity")
    func contextEquality() {
        let queue = DispatchQueue(label: "context.equality")
        let otherQueue = DispatchQueue(label: "context.equality")
        let executor = SerialQueueExecutor(tag: "context.equality.executor")
        #expect(PromiseContext.queue(queue) == .queue(queue))
        #expect(PromiseContext.queue(queue) != .queue(otherQueue))
        #expect(PromiseContext.queue(.main) != .main)
        #expect(PromiseContext.nowOr(.main) == .nowOr(.main))
        #expect(PromiseContext.nowOr(.main) != .nowOr(.utility))
        #expect(PromiseContext.nowOr(.main) != .main)
        #expect(PromiseContext.executor(executor) == .executor(executor))
        #expect(PromiseContext.executor(executor) != .executor(SerialQueueExecutor(tag: "other")))
        let set: Set<PromiseContext> = [.main, .queue(queue), .nowOr(.queue(queue)), .executor(executor), .immediate]
        #expect(set.contains(.queue(queue)))
        #expect(set.contains(.nowOr(.queue(queue))))
        #expect(!set.contains(.queue(otherQueue)))
        #expect(set.count == 5)
    }

    // MARK: B2, J2: ordering

    @Test("callbacks on a serial queue run in registration order (B2)")
    func serialQueueCallbacksRunInRegistrationOrder() async {
        let queue = makeTaggedQueue("context.order")
        let (promise, resolver) = IntPromise.makeWithResolver()
        let order = Recorder<Int>()
        for index in 0..<200 {
            promise.tap(on: .queue(queue)) { _ in order.record(index) }
        }
        DispatchQueue.global().async { resolver.fulfill(with: 1) }
        let last = promise.map(on: .queue(queue)) { $0 }
        #expect(await waitForResult(last) == .value(1))
        await drain(queue)
        #expect(order.values == Array(0..<200))
    }

    @Test("on an already-resolved promise, callbacks on a serial queue still run in registration order (B2)")
    func serialQueueOrderForResolvedPromise() async {
        let queue = makeTaggedQueue("context.orderResolved")
        let promise = IntPromise(fulfilled: 1)
        let order = Recorder<Int>()
        for index in 0..<100 {
            _ = promise.then(on: .queue(queue)) { _ in order.record(index) }
        }
        await drain(queue)
        #expect(order.values == Array(0..<100))
    }

    @Test("pipes resolve depth-first: P=[a, pipe→C, b], C=[c1, pipe→D, c2], D=[d] runs a c1 d c2 b (J2)")
    func pipesResolveDepthFirst() {
        let order = Recorder<String>()
        let (p, resolver) = IntPromise.makeWithResolver()
        p.tap(on: .immediate) { _ in order.record("a") }
        let c = p.makeChild()
        p.tap(on: .immediate) { _ in order.record("b") }
        c.tap(on: .immediate) { _ in order.record("c1") }
        let d = c.makeChild()
        c.tap(on: .immediate) { _ in order.record("c2") }
        d.tap(on: .immediate) { _ in order.record("d") }
        resolver.fulfill(with: 1)
        #expect(order.values == ["a", "c1", "d", "c2", "b"])
    }

    @Test("a resolver adopting a promise resolves its observers at that point of the list (J2)")
    func resolveWithPromiseIsDepthFirst() {
        let order = Recorder<String>()
        let (p, resolver) = IntPromise.makeWithResolver()
        let (adopter, adopterResolver) = IntPromise.makeWithResolver()
        p.tap(on: .immediate) { _ in order.record("first") }
        adopterResolver.resolve(with: p)
        p.tap(on: .immediate) { _ in order.record("last") }
        adopter.tap(on: .immediate) { _ in order.record("adopter") }
        resolver.fulfill(with: 1)
        #expect(order.values == ["first", "adopter", "last"])
    }

    // MARK: every family honours its context

    @Test("every callback family runs its callback on the context it is given")
    func everyFamilyRunsOnItsQueue() async {
        let queue = makeTaggedQueue("context.families")
        let context = PromiseContext.queue(queue)
        let tags = Recorder<String>()
        @Sendable func note(_ name: String) { tags.record("\(name)@\(currentQueueTag ?? "-")") }
        let value = StdPromise<Int>(fulfilled: 1)
        let error = StdPromise<Int>(rejected: TestError.boom)
        let cancelled = StdPromise<Int>(with: .cancelled)
        let children: [StdPromise<Int>] = [
            value.then(on: context) { _ in note("then") },
            value.map(on: context) {
                note("map"); return $0
            },
            value.flatMap(on: context) {
                note("flatMap"); return StdPromise(fulfilled: $0)
            },
            value.tryThen(on: context) { _ in note("tryThen") },
            value.tryMap(on: context) {
                note("tryMap"); return $0
            },
            value.tryFlatMap(on: context) {
                note("tryFlatMap"); return Promise<Int, TestError>(fulfilled: $0)
            },
            error.catch(on: context) { _ in note("catch") },
            error.recover(on: context) { _ in
                note("recover"); return 0
            }.upcast,
            error.tryRecover(on: context) { _ in
                note("tryRecover"); return 0
            },
            error.mapError(on: context) {
                note("mapError"); return $0
            },
            error.flatMapError(on: context) {
                note("flatMapError"); return StdPromise(rejected: $0)
            },
            error.tryMapError(on: context) { _ -> TestError in
                note("tryMapError"); return .other
            },
            error.tryFlatMapError(on: context) { _ in
                note("tryFlatMapError"); return Promise<Int, TestError>(rejected: .other)
            },
            value.always(on: context) { _ in note("always") },
            value.mapResult(on: context) {
                note("mapResult"); return $0
            },
            value.flatMapResult(on: context) {
                note("flatMapResult"); return StdPromise(with: $0)
            },
            value.tryMapResult(on: context) { result -> PromiseResult<Int, TestError> in
                note("tryMapResult"); return .value(result.value ?? 0)
            },
            value.tryFlatMapResult(on: context) { _ in
                note("tryFlatMapResult"); return Promise<Int, TestError>(fulfilled: 0)
            },
            cancelled.onCancel(on: context) { note("onCancel") },
            value.tap(on: context) { _ in note("tap") },
        ]
        for child in children {
            #expect(await waitForResult(child) != nil)
        }
        await drain(queue)
        let names = [
            "then", "map", "flatMap", "tryThen", "tryMap", "tryFlatMap", "catch", "recover", "tryRecover",
            "mapError", "flatMapError", "tryMapError", "tryFlatMapError", "always", "mapResult",
            "flatMapResult", "tryMapResult", "tryFlatMapResult", "onCancel", "tap",
        ]
        #expect(Set(tags.values) == Set(names.map { "\($0)@context.families" }))
        #expect(tags.count == names.count)
    }

    // MARK: B6: .main chaining

    @Test("a .main chain runs its callbacks in chain order on the main queue (B6)")
    func mainChainRunsInOrder() async {
        let order = Recorder<String>()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        let end =
            promise
            .then(on: .main) { _ in order.record("then \(currentDispatchQueueLabel)") }
            .map(on: .main) { value -> Int in
                order.record("map"); return value + 1
            }
            .flatMap(on: .main) { value -> StdPromise<Int> in
                order.record("flatMap"); return StdPromise(rejected: TestError.boom)
            }
            .catch(on: .main) { _ in order.record("catch") }
            .recover(on: .main) { _ -> Int in
                order.record("recover"); return 5
            }
            .flatMapResult(on: .main) { result -> Promise<Int, NoError> in
                order.record("flatMapResult"); return Promise(with: result)
            }
            .always(on: .main) { _ in order.record("always") }
        resolver.fulfill(with: 1)
        #expect(await waitForResult(end) == .value(5))
        #expect(
            order.values == [
                "then \(DispatchQueue.main.label)", "map", "flatMap", "catch", "recover", "flatMapResult", "always",
            ])
    }

    @Test("a .main callback triggered inside a .main callback waits for it to return (B6)")
    func mainCallbackIsNotReentrant() async {
        let order = Recorder<String>()
        let (inner, innerResolver) = IntPromise.makeWithResolver()
        let observed = inner.map(on: .main) { value -> Int in
            order.record("inner observer"); return value
        }
        let outer = IntPromise(fulfilled: 1).map(on: .main) { value -> Int in
            order.record("outer start")
            innerResolver.fulfill(with: value)
            order.record("outer end")
            return value
        }
        #expect(await waitForResult(outer) == .value(1))
        #expect(await waitForResult(observed) == .value(1))
        #expect(order.values == ["outer start", "outer end", "inner observer"])
    }
}
