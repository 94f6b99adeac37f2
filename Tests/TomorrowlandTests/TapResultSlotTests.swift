import Testing
import TomorrowlandTestSupport

@testable import Tomorrowland

/// A tap handed to an executor copies a result of at most 16 bytes into its own node, so the job
/// does not keep the resolved promise alive; larger results are read from the promise, which the
/// job then holds. Either way the callback sees the result once, and a result whose job never
/// runs is released with the job.
///
/// The promises here are derived ones (`tap()` of a root): the first tap of a pending root promise
/// takes no node at all, its box is the job (`RootBoxSlotTests`).
@Suite("Tap result slot")
struct TapResultSlotTests {
    /// A pending promise whose box is not a root box (no slot): its taps are `TapNode`s.
    static func makeDerivedWithResolver<Value>() -> (Promise<Value, Never>, Promise<Value, Never>.Resolver) {
        let (root, resolver) = Promise<Value, Never>.makeWithResolver()
        return (root.tap(), resolver)
    }

    /// Reports its deinit, so that a test can tell when the library released a result.
    final class Payload: Sendable {
        let value: Int
        let deaths: Recorder<Int>
        init(_ value: Int, deaths: Recorder<Int>) {
            self.value = value
            self.deaths = deaths
        }
        deinit { deaths.record(value) }
    }

    /// Resolves a promise of `Value` with `value` after a tap on `executor`, drops every handle
    /// of the promise, and returns a weak reference to its box.
    static func resolveWithWaitingTap<Value: Sendable>(
        _ value: Value, on executor: ManualJobExecutor, token: PromiseInvalidationToken? = nil,
        onResult: @escaping @Sendable (PromiseResult<Value, Never>) -> Void
    ) -> WeakBox {
        let (promise, resolver): (Promise<Value, Never>, _) = makeDerivedWithResolver()
        promise.tap(on: .executor(executor), token: token, onResult)
        resolver.fulfill(with: value)
        return WeakBox(promise.box)
    }

    /// A weak reference to a promise's storage.
    struct WeakBox {
        weak var box: PromiseCore?
        init(_ box: PromiseCore) { self.box = box }
    }

    @Test("a waiting tap whose result fits its node does not keep the promise alive")
    func smallResultFreesThePromise() {
        let executor = ManualJobExecutor()
        let seen = Recorder<PromiseResult<Int, Never>>()
        let weak = Self.resolveWithWaitingTap(42, on: executor) { seen.record($0) }
        #expect(executor.pendingCount == 1)
        #expect(weak.box == nil, "the job holds a copy of the result, not the promise")
        executor.runPending()
        #expect(seen.values == [.value(42)])
    }

    @Test("a waiting tap whose result does not fit its node reads it from the promise it keeps")
    func largeResultKeepsThePromise() {
        typealias Triple = (Int, Int, Int)
        #expect(MemoryLayout<PromiseResult<Triple, Never>?>.size > 16)
        let executor = ManualJobExecutor()
        let seen = Recorder<Triple>()
        let (promise, resolver): (Promise<Triple, Never>, _) = Self.makeDerivedWithResolver()
        promise.tap(on: .executor(executor)) { seen.record($0.value ?? (0, 0, 0)) }
        resolver.fulfill(with: (1, 2, 3))
        let weak = WeakBox(promise.box)
        _ = consume promise
        _ = consume resolver
        #expect(weak.box != nil, "the job reads the result from the promise")
        executor.runPending()
        #expect(seen.values.map { [$0.0, $0.1, $0.2] } == [[1, 2, 3]])
        #expect(weak.box == nil, "released once the job ran")
    }

    @Test("a copied class result lives until the callback has run, then is released")
    func copiedReferenceReleasedAfterCallback() {
        let executor = ManualJobExecutor()
        let deaths = Recorder<Int>()
        let seen = Recorder<Int>()
        let weak = Self.resolveWithWaitingTap(Payload(7, deaths: deaths), on: executor) {
            seen.record($0.value?.value ?? -1)
        }
        #expect(weak.box == nil)
        #expect(deaths.values.isEmpty, "the waiting job owns a copy of the result")
        executor.runPending()
        #expect(seen.values == [7])
        #expect(deaths.values == [7], "released with the callback's last use of it")
    }

    @Test("a copied result whose job is dropped unrun is released with the job, and the callback never runs")
    func droppedJobReleasesCopiedResult() {
        let executor = ManualJobExecutor()
        let deaths = Recorder<Int>()
        let seen = Recorder<Int>()
        _ = Self.resolveWithWaitingTap(Payload(8, deaths: deaths), on: executor) {
            seen.record($0.value?.value ?? -1)
        }
        #expect(deaths.values.isEmpty)
        executor.dropPending()
        #expect(deaths.values == [8])
        #expect(seen.values.isEmpty)
    }

    @Test("a copied result is released when the tap's token was invalidated before the job ran")
    func invalidatedTokenReleasesCopiedResult() {
        let executor = ManualJobExecutor()
        let deaths = Recorder<Int>()
        let seen = Recorder<Int>()
        let token = PromiseInvalidationToken()
        _ = Self.resolveWithWaitingTap(Payload(9, deaths: deaths), on: executor, token: token) {
            seen.record($0.value?.value ?? -1)
        }
        token.invalidate()
        executor.runPending()
        #expect(seen.values.isEmpty)
        #expect(deaths.values == [9])
    }

    @Test("a tap on a promise that is cancelled gets .cancelled from its slot")
    func cancelledResultThroughTheSlot() {
        let executor = ManualJobExecutor()
        let seen = Recorder<PromiseResult<Int, Never>>()
        let (promise, resolver): (Promise<Int, Never>, _) = Self.makeDerivedWithResolver()
        promise.tap(on: .executor(executor)) { seen.record($0) }
        resolver.cancel()
        executor.runPending()
        #expect(seen.values == [.cancelled])
    }
}
