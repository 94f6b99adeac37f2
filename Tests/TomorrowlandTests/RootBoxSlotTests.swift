import Dispatch
import Testing
import TomorrowlandTestSupport
import TomorrowlandTesting

@testable import Tomorrowland

/// The first `tap` of a pending root promise lives in the root box's slot (`RootBox`), and the box
/// is the node that runs it: what that may not change (registration order, release on the
/// context, a box that dies unresolved, abandoned jobs, races with the resolution) and what it
/// saves (the tap's node).
@Suite("Root box slot")
struct RootBoxSlotTests {
    /// The root box of a promise of `Int`.
    typealias IntRootBox = RootBox<PromiseResult<Int, Never>>

    @Test("the first token-less tap of a pending root promise goes into the box, not a node")
    func firstTapTakesTheSlot() {
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        let box = promise.box
        #expect(box is IntRootBox)
        promise.tap(on: .immediate) { _ in }
        #expect(box.hasFirstSlotCallback)
        #expect(box.callbackHead == nil, "no node in the list")
        promise.tap(on: .immediate) { _ in }
        #expect(box.callbackHead is TapNode<Int, Never>, "the second tap is a node")
        resolver.fulfill(with: 1)
    }

    @Test("a tap with a token, a tap after another callback, or a tap on a resolved promise takes no slot")
    func slotOnlyForTheFirstTokenLessTap() {
        let token = PromiseInvalidationToken()
        let (withToken, resolver1) = Promise<Int, Never>.makeWithResolver()
        withToken.tap(on: .immediate, token: token) { _ in }
        #expect(!withToken.box.hasFirstSlotCallback)

        let (afterMap, resolver2) = Promise<Int, Never>.makeWithResolver()
        let mapped = afterMap.map(on: .immediate) { $0 }
        afterMap.tap(on: .immediate) { _ in }
        #expect(!afterMap.box.hasFirstSlotCallback, "the map registered first must run first (B2)")

        let resolved = Promise<Int, Never>(fulfilled: 1)
        let seen = Recorder<Int>()
        resolved.tap(on: .immediate) { seen.record($0.value ?? -1) }
        #expect(seen.values == [1])
        resolver1.fulfill(with: 1)
        resolver2.fulfill(with: 1)
        _ = mapped
    }

    @Test("the slot's tap runs before every later callback, on .immediate and on a loop (B2)")
    func slotRunsFirst() throws {
        let log = Recorder<String>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        promise.tap(on: .immediate) { log.record("slot \($0.value ?? -1)") }
        promise.tap(on: .immediate) { log.record("tap \($0.value ?? -1)") }
        let mapped = promise.map(on: .immediate) { value -> Int in
            log.record("map \(value)")
            return value
        }
        promise.tap(on: .immediate) { log.record("last \($0.value ?? -1)") }
        resolver.fulfill(with: 3)
        #expect(log.values == ["slot 3", "tap 3", "map 3", "last 3"])
        #expect(mapped.result == .value(3))

        try withTestLoop { loop in
            let loopLog = Recorder<Int>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            for index in 0..<4 {
                promise.tap(on: .loop(loop)) { loopLog.record(index * 100 + ($0.value ?? -1)) }
            }
            promise.tap(on: .immediate) { loopLog.record(-($0.value ?? -1)) }
            resolver.fulfill(with: 5)
            #expect(loopLog.values == [-5], "only the .immediate tap ran inside the resolving call")
            #expect(loop.readyCount == 1, "the slot and the three loop taps after it go as one batch")
            loop.run()
            #expect(loopLog.values == [-5, 5, 105, 205, 305])
        }
    }

    @Test("a slot's tap on an executor is the box itself: one job, which holds the box until it ran")
    func slotJobIsTheBox() {
        let executor = ManualJobExecutor()
        let seen = Recorder<PromiseResult<Int, Never>>()
        weak var weakBox: PromiseCore?
        do {
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .executor(executor)) { seen.record($0) }
            weakBox = promise.box
            resolver.fulfill(with: 42)
        }
        #expect(executor.pendingCount == 1)
        #expect(weakBox != nil, "the job is the box")
        #expect(seen.values.isEmpty)
        executor.runPending()
        #expect(seen.values == [.value(42)])
        #expect(weakBox == nil, "released once the job ran")
    }

    @Test("the slot's closure is released after it ran, on its context (B7)")
    func slotClosureReleasedOnContext() async {
        let queue = makeTaggedQueue("slot.release")
        let deaths = Recorder<DeinitSpy.Death>()
        let ran = Recorder<String?>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        promise.tap(
            on: .queue(queue),
            DeinitSpy.holding("slot", reportingTo: deaths) { (_: PromiseResult<Int, Never>) in
                ran.record(currentQueueTag)
            }
        )
        #expect(promise.box.hasFirstSlotCallback)
        #expect(deaths.values.isEmpty, "held until the promise resolves")
        resolver.fulfill(with: 1)
        #expect(await eventually { deaths.count == 1 })
        #expect(ran.values == ["slot.release"])
        #expect(deaths.values.map(\.queueTag) == ["slot.release"])
    }

    @Test("the slot's closure is released after it ran, not before, on an executor (B7)")
    func slotClosureReleasedByTheJob() {
        let executor = ManualJobExecutor()
        let deaths = Recorder<DeinitSpy.Death>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        promise.tap(
            on: .executor(executor),
            DeinitSpy.holding("slot", reportingTo: deaths) { (_: PromiseResult<Int, Never>) in })
        resolver.fulfill(with: 1)
        #expect(deaths.values.isEmpty, "the waiting job holds the closure")
        executor.runPending()
        #expect(deaths.values.map(\.name) == ["slot"])
    }

    @Test("a slot's job that is abandoned, or dropped, releases the closure unrun")
    func abandonedSlotJob() {
        for abandon in [true, false] {
            let executor = ManualJobExecutor()
            let deaths = Recorder<DeinitSpy.Death>()
            let seen = Recorder<Int>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(
                on: .executor(executor),
                DeinitSpy.holding("slot", reportingTo: deaths) { (result: PromiseResult<Int, Never>) in
                    seen.record(result.value ?? -1)
                })
            resolver.fulfill(with: 1)
            if abandon {
                let job = promise.box as PromiseCallbackNode
                job.abandon()
                #expect(deaths.values.map(\.name) == ["slot"], "abandon releases the closure")
                executor.dropPending()
            } else {
                executor.dropPending()
                #expect(deaths.values.isEmpty, "the promise still holds its box")
                _ = consume promise
                _ = consume resolver
                #expect(deaths.values.map(\.name) == ["slot"], "released with the box")
            }
            #expect(seen.values.isEmpty)
        }
    }

    @Test("a root box that dies unresolved runs its slot's tap with .cancelled, then its list (A3)")
    func dyingBoxRunsTheSlotCancelled() {
        let log = Recorder<String>()
        let deaths = Recorder<DeinitSpy.Death>()
        var mapped: Promise<Int, Never>?
        do {
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            promise.tap(
                on: .immediate,
                DeinitSpy.holding("slot", reportingTo: deaths) { (result: PromiseResult<Int, Never>) in
                    log.record("slot \(result)")
                })
            promise.tap(on: .immediate) { log.record("tap \($0)") }
            mapped = promise.map(on: .immediate) { $0 + 1 }
            #expect(promise.box.hasFirstSlotCallback)
            _ = consume resolver
        }
        #expect(log.values == ["slot cancelled", "tap cancelled"])
        #expect(deaths.values.map(\.name) == ["slot"], "the slot's closure ran and was released")
        #expect(mapped?.result == .cancelled)
    }

    @Test("a root box that dies unresolved with only a slot tap on an executor runs it there, cancelled (A3)")
    func dyingBoxRunsTheSlotOnItsExecutor() {
        let executor = ManualJobExecutor()
        let seen = Recorder<PromiseResult<Int, Never>>()
        do {
            let (promise, _) = Promise<Int, Never>.makeWithResolver()
            promise.tap(on: .executor(executor)) { seen.record($0) }
        }
        #expect(executor.pendingCount == 1)
        #expect(seen.values.isEmpty)
        executor.runPending()
        #expect(seen.values == [.cancelled])
    }

    @Test("a tracked root box has the slot too, and runs it cancelled when it dies unresolved")
    func trackedBoxHasTheSlot() {
        let seen = Recorder<PromiseResult<Int, Never>>()
        let executor = ManualJobExecutor()
        do {
            let box = TrackedResultBox<PromiseResult<Int, Never>>()
            let promise = Promise<Int, Never>(box: box)
            promise.tap(on: .executor(executor)) { seen.record($0) }
            #expect(box.hasFirstSlotCallback)
        }
        executor.runPending()
        #expect(seen.values == [.cancelled])

        let box = TrackedResultBox<PromiseResult<Int, Never>>()
        let promise = Promise<Int, Never>(box: box)
        promise.tap(on: .immediate) { seen.record($0) }
        Promise<Int, Never>.Resolver(box: box).fulfill(with: 9)
        #expect(seen.values == [.cancelled, .value(9)])
    }

    @Test("a slot tap registered while another thread resolves runs once, with the result")
    func slotRacesTheResolution() {
        for _ in 0..<2_000 {
            let log = Recorder<Int>()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let start = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                start.wait()
                resolver.fulfill(with: 7)
                done.signal()
            }
            start.signal()
            promise.tap(on: .immediate) { log.record($0.value ?? -1) }
            promise.tap(on: .immediate) { log.record(100 + ($0.value ?? -1)) }
            done.wait()
            // Sorted: a second tap registered after the resolution runs at once on this thread
            // (`.immediate`), maybe before the resolving thread ran the slot, as a second node
            // would. B2 orders callbacks registered before the resolution; the slot's place among
            // those is checked by the ordering tests above.
            #expect(log.values.sorted() == [7, 107])
        }
    }

    @Test("a slot tap on an executor, resolved on another thread, runs once on the executor")
    func slotOnAnExecutorResolvedElsewhere() async throws {
        let executor = SerialQueueExecutor(tag: "slot.race")
        for round in 0..<500 {
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let onExecutor = Recorder<Bool>()
            promise.tap(on: .executor(executor)) { _ in onExecutor.record(executor.isCurrent) }
            let after = promise.map(on: .executor(executor)) { $0 }
            DispatchQueue.global().async { resolver.fulfill(with: round) }
            #expect(try await after.value == round)
            #expect(onExecutor.values == [true], "the slot ran once, on its executor, before the map")
        }
    }

    #if !canImport(ObjectiveC)
        @Test("a root box with its slot takes at most 104 bytes (a 112-byte chunk)")
        func rootBoxSize() throws {
            try #require(ClassInstanceSize.readsTheRuntimesLayout)
            // The type, not the box of a promise made here: while another test tracks pending
            // promises, `makeWithResolver` makes a `TrackedResultBox`.
            #expect(ClassInstanceSize.of(RootBox<PromiseResult<Int, Never>>.self) <= 104)
        }
    #endif
}
