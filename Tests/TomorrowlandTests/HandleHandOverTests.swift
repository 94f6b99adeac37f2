import Testing
import TomorrowlandTestSupport
import TomorrowlandTesting

@testable import Tomorrowland

/// A deriving method (`map`, `flatMap`, `then`, …) consumes the promise it is called on. When
/// that value was the last copy of its promise, the handle object goes to the derived promise
/// instead of a new one (`PromiseSeal.retarget(to:)`), and the old promise is sealed then, as the
/// handle's death would have sealed it (D1). These tests pin both paths: the handed-over handle
/// (a chain built with `consume`) and the kept one (a promise still used after the call).
@Suite("Handle hand-over on deriving methods")
struct HandleHandOverTests {
    typealias IntPromise = Promise<Int, String>

    @Test("a consumed last copy hands its handle to the derived promise; a kept copy does not")
    func theHandleMovesOnlyFromALastCopy() {
        let (head, resolver) = IntPromise.makeWithResolver()
        let kept = head.map(on: .immediate) { $0 + 1 }
        // `head` is used below, so the call above had a copy: the handle stays with `head`.
        #expect(ObjectIdentifier(kept.seal) != ObjectIdentifier(head.seal))
        let handle = ObjectIdentifier(head.seal)
        let moved = (consume head).map(on: .immediate) { $0 + 2 }
        #expect(ObjectIdentifier(moved.seal) == handle)
        resolver.fulfill(with: 1)
        #expect(kept.result == .value(2))
        #expect(moved.result == .value(3))
    }

    @Test(
        "a cancel request on the tail of a chain built by reassignment reaches its head: every link was sealed (D1)",
        arguments: ["map", "flatMap", "then", "mapError", "mapResult", "always"])
    func aReassignedChainPropagatesCancelToItsHead(family: String) {
        let (head, resolver) = IntPromise.makeWithResolver()
        let requested = Recorder<String>()
        resolver.onRequestCancel(on: .immediate) { _ in requested.record("head") }
        // `consume`: a live `head` would be a handle of the head, which keeps it from being
        // cancelled by propagation (D1).
        var promise = consume head
        for _ in 0..<5 {
            switch family {
            case "map": promise = (consume promise).map(on: .immediate) { $0 + 1 }
            case "flatMap": promise = (consume promise).flatMap(on: .immediate) { IntPromise(fulfilled: $0 + 1) }
            case "then": promise = (consume promise).then(on: .immediate) { _ in }
            case "mapError": promise = (consume promise).mapError(on: .immediate) { $0 }
            case "mapResult": promise = (consume promise).mapResult(on: .immediate) { $0 }
            default: promise = (consume promise).always(on: .immediate) { _ in }
            }
        }
        let tail = ObjectIdentifier(promise.seal)
        promise.requestCancel()
        #expect(requested.values == ["head"])
        resolver.cancel()
        #expect(promise.result == .cancelled)
        #expect(ObjectIdentifier(promise.seal) == tail)
    }

    @Test("an observer left on a link in the middle keeps a cancel request from the tail from reaching the head (D1)")
    func aSecondObserverStillCounts() {
        let (head, resolver) = IntPromise.makeWithResolver()
        let requested = Recorder<String>()
        resolver.onRequestCancel(on: .immediate) { _ in requested.record("head") }
        let middle = (consume head).map(on: .immediate) { $0 + 1 }
        let other = middle.map(on: .immediate) { $0 + 10 }
        let tail = (consume middle).map(on: .immediate) { $0 + 100 }
        tail.requestCancel()
        #expect(requested.values.isEmpty)
        other.requestCancel()
        #expect(requested.values == ["head"])
    }

    @Test("onCancel on a consumed last copy: the upstream is sealed, and counted only when a cancel is requested (D5)")
    func onCancelOnAConsumedCopy() {
        let (head, resolver) = IntPromise.makeWithResolver()
        let seen = Recorder<String>()
        resolver.onRequestCancel(on: .immediate) { _ in seen.record("head cancel requested") }
        let observed = (consume head).onCancel(on: .immediate) { seen.record("onCancel ran") }
        #expect(seen.values.isEmpty)
        observed.requestCancel()
        #expect(seen.values == ["head cancel requested"])
        resolver.cancel()
        #expect(seen.values == ["head cancel requested", "onCancel ran"])
    }

    /// A weak reference to a box, for counting which boxes are still alive.
    final class WeakBox {
        weak var core: PromiseCore?
        init(_ core: PromiseCore) { self.core = core }
    }

    @Test(
        "a chain built by reassignment frees each link once it resolved, and keeps the tail while its handle lives",
        arguments: [false, true])
    func aReassignedChainNeitherLeaksNorFreesEarly(onLoop: Bool) throws {
        // Each link moves references by hand: the new box's into the handle, the consumed value's
        // handle into the returned value, the box into its upstream's list and its upstream into
        // its job (`next`, written in place). A reference dropped early frees a box still in use
        // (a crash, or a box found dead below); one kept leaks it.
        try withTestLoop { loop in
            let context: PromiseContext = onLoop ? .loop(loop) : .immediate
            let (head, resolver) = IntPromise.makeWithResolver()
            var boxes: [WeakBox] = []
            var promise = consume head
            for _ in 0..<5 {
                promise = (consume promise).map(on: context) { $0 + 1 }
                boxes.append(WeakBox(promise.box))
            }
            // Pending: every link is held by its upstream's list, the tail by its handle too.
            #expect(boxes.allSatisfy { $0.core != nil })
            resolver.fulfill(with: 0)
            loop.run()
            #expect(boxes.dropLast().allSatisfy { $0.core == nil })
            #expect(boxes.last?.core != nil)
            #expect(promise.result == .value(5))
            _ = consume promise
            #expect(boxes.last?.core == nil)
        }
    }

    @Test(
        "a box run as a job runs its callbacks while its executor holds it: each reads its result, and the box is freed after",
        arguments: [1, 3])
    func aJobsBoxLivesWhileItsCallbacksRun(callbacks: Int) throws {
        // The callbacks a job's box makes ready take no reference to it (`settledInPlace`): the
        // loop's reference to the job is what keeps the box alive while they read its result. One
        // callback (a chain's next link) fires with the box borrowed; several take the general
        // drain. The box must be neither freed before they ran nor kept after.
        try withTestLoop { loop in
            let (head, resolver) = IntPromise.makeWithResolver()
            let middle = (consume head).map(on: .loop(loop)) { $0 + 1 }
            let watched = WeakBox(middle.box)
            var tails: [IntPromise] = []
            for _ in 1..<callbacks { tails.append(middle.map(on: .immediate) { $0 * 10 }) }
            // The last copy, consumed: its handle moves on, so the box's only holders are its
            // upstream's list, then its job.
            tails.append((consume middle).map(on: .immediate) { $0 * 10 })
            #expect(watched.core != nil)
            resolver.fulfill(with: 1)
            loop.run()
            #expect(tails.map(\.result) == Array(repeating: .value(20), count: callbacks))
            #expect(watched.core == nil)
        }
    }

    @Test("a chain resolves through a handed-over handle, on a context that hops")
    func aChainOnAQueueResolves() async {
        let (head, resolver) = IntPromise.makeWithResolver()
        var promise = consume head
        for _ in 0..<100 { promise = (consume promise).map(on: .utility) { $0 + 1 } }
        resolver.fulfill(with: 0)
        #expect(await waitForResult(promise) == .value(100))
    }
}
