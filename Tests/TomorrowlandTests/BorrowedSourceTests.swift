import Testing
import TomorrowlandTestSupport
import TomorrowlandTesting

@testable import Tomorrowland

/// The references the hot path does not take (CoreInvariants: "Ownership in the drain"):
/// `resolve` runs the callbacks with the box borrowed from its caller, a timeout's `.run` stage
/// settles in place (the job's executor, or the inline dispatch, holds the box), `tap` and
/// `timeout` register on the box borrowed from the promise's handle, and a registration hands the
/// caller's reference to the node over to the list. Each test checks that every object still dies
/// (no reference kept) and that nothing dies early (the callbacks see their results; ASan would
/// report a second release).
@Suite("Borrowed sources on the hot path")
struct BorrowedSourceTests {
    typealias IntPromise = Promise<Int, Never>

    /// The callback lists `resolve` drains: one node (the slot, a `map`'s box) takes the
    /// borrowed path, several take a reference of their own.
    enum ListShape: String, CaseIterable, Sendable {
        case slotOnly, tapNodeOnly, mapOnly, slotTapAndMap
    }

    @Test(
        "resolve drains the callbacks with the box borrowed from the resolver, and the box dies with it",
        arguments: ListShape.allCases)
    func resolveBorrowsTheBox(shape: ListShape) {
        let log = Recorder<String>()
        let token = PromiseInvalidationToken()
        weak var weakBox: PromiseCore?
        var mapped: IntPromise?
        var resolver: IntPromise.Resolver
        do {
            let (promise, promiseResolver) = IntPromise.makeWithResolver()
            resolver = promiseResolver
            weakBox = promise.box
            switch shape {
            case .slotOnly:
                promise.tap(on: .immediate) { log.record("slot \($0.value ?? -1)") }
            case .tapNodeOnly:
                // A token keeps the tap out of the slot: a `TapNode`, the list's one node.
                promise.tap(on: .immediate, token: token) { log.record("tap \($0.value ?? -1)") }
            case .mapOnly:
                mapped = promise.map(on: .immediate) { $0 + 1 }
            case .slotTapAndMap:
                promise.tap(on: .immediate) { log.record("slot \($0.value ?? -1)") }
                promise.tap(on: .immediate) { log.record("tap \($0.value ?? -1)") }
                mapped = promise.map(on: .immediate) { $0 + 1 }
            }
        }
        // The resolver holds the only reference to the box now.
        #expect(weakBox != nil)
        resolver.fulfill(with: 7)
        let expected: [String] =
            switch shape {
            case .slotOnly: ["slot 7"]
            case .tapNodeOnly: ["tap 7"]
            case .mapOnly: []
            case .slotTapAndMap: ["slot 7", "tap 7"]
            }
        #expect(log.values == expected)
        if let mapped { #expect(mapped.result == .value(8)) }
        #expect(weakBox != nil, "the resolver still holds the box")
        resolver = IntPromise.makeWithResolver().1
        #expect(weakBox == nil, "the drain kept no reference to the box")
        withExtendedLifetime(token) {}
    }

    @Test(
        "a callback that drops the last stored resolver while resolve runs: the caller's copy keeps the box for the rest of the list"
    )
    func resolverDroppedByItsOwnCallback() {
        let log = Recorder<String>()
        let stored = Locked<IntPromise.Resolver?>(nil)
        weak var weakBox: PromiseCore?
        do {
            let (promise, resolver) = IntPromise.makeWithResolver()
            weakBox = promise.box
            stored.withLock { $0 = resolver }
            promise.tap(on: .immediate) { result in
                stored.withLock { $0 = nil }
                log.record("first \(result.value ?? -1)")
            }
            promise.tap(on: .immediate) { log.record("second \($0.value ?? -1)") }
            let mapped = promise.map(on: .immediate) { $0 * 2 }
            mapped.tap(on: .immediate) { log.record("mapped \($0.value ?? -1)") }
        }
        stored.withLock { $0 }?.fulfill(with: 21)
        #expect(log.values == ["first 21", "second 21", "mapped 42"])
        #expect(weakBox == nil, "the box died with the caller's copy of the resolver")
    }

    /// Where the timeout's result is delivered: through a job on the loop (the `.run` stage with the
    /// job's executor holding the box), or inline (the `.run` stage of the inline dispatch).
    enum TimeoutDelivery: String, CaseIterable, Sendable {
        case job, inline
    }

    @Test(
        "a timeout's result, settled in place, reaches every callback, and the timeout, its upstream and the callbacks all die",
        arguments: TimeoutDelivery.allCases, [1, 2])
    func timeoutSettlesInPlace(delivery: TimeoutDelivery, callbacks: Int) throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            weak var weakUpstream: PromiseCore?
            weak var weakTimeout: PromiseCore?
            weak var weakSpy: DeinitSpy?
            let deaths = Recorder<DeinitSpy.Death>()
            do {
                let (upstream, resolver) = IntPromise.makeWithResolver()
                weakUpstream = upstream.box
                if delivery == .inline { resolver.fulfill(with: 5) }
                // `.nowOr` on a resolved upstream delivers inline; otherwise through a job.
                let timeout = upstream.timeout(on: .nowOr(.loop(loop)), delay: .seconds(30))
                weakTimeout = timeout.box
                let spy = DeinitSpy("tap", reportingTo: deaths)
                weakSpy = spy
                timeout.tap(on: .immediate) { result in
                    spy.touch()
                    log.record("tap \(result.value ?? -1)")
                }
                if callbacks > 1 { timeout.tap(on: .immediate) { log.record("second \($0.value ?? -1)") } }
                if delivery == .job {
                    resolver.fulfill(with: 5)
                    #expect(log.values.isEmpty, "the result waits for the loop")
                }
            }
            loop.run()
            #expect(log.values == (callbacks > 1 ? ["tap 5", "second 5"] : ["tap 5"]))
            #expect(loop.timerCount == 0)
            #expect(weakSpy == nil, "the tap's closure was released where it ran")
            #expect(weakTimeout == nil, "nothing kept the timeout's box")
            #expect(weakUpstream == nil, "nothing kept the upstream's box")
        }
    }

    @Test("a tap registered on a pending promise hands its node to the list: the node dies once it ran")
    func tapNodeHandedToTheList() {
        var executor: ManualJobExecutor? = ManualJobExecutor()
        weak let weakExecutor = executor
        let log = Recorder<Int>()
        do {
            let (promise, resolver) = IntPromise.makeWithResolver()
            // The slot takes the first tap; the second is a node on the executor (which its
            // context holds until the node dies).
            promise.tap(on: .immediate) { log.record($0.value ?? -1) }
            promise.tap(on: .executor(executor!)) { log.record(($0.value ?? -1) * 10) }
            // And one registered on the resolved promise, which fires at once.
            resolver.fulfill(with: 3)
            promise.tap(on: .executor(executor!)) { log.record(($0.value ?? -1) * 100) }
            executor!.runPending()
        }
        #expect(log.values == [3, 30, 300])
        executor = nil
        #expect(weakExecutor == nil, "the nodes (which held the executor in their context) died")
    }
}
