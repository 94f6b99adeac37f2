import Dispatch
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// Automatic cancellation propagation: observer counting and sealing (D1, D2), which methods
/// propagate (D3), `tap` (D4), `onCancel` (D5), `ignoringCancel` (D6), `makeChild` (D7),
/// `propagatingCancellation` (D8), the `NoError` upcast quirk (D9), and C5.
@Suite("Cancellation propagation")
struct CancellationPropagationTests {
    typealias IntPromise = Promise<Int, String>

    // MARK: D1, D2: counting and sealing

    @Test("a sealed parent whose only child requests cancellation is asked to cancel, once (D1)")
    func onlyChildCancelsSealedParent() {
        let (child, resolver, requests) = withSealedParent(IntPromise.self) { $0.map(on: .immediate) { $0 + 1 } }
        #expect(requests.values.isEmpty)
        child.requestCancel()
        #expect(requests.count == 1)
        #expect(resolver.hasRequestedCancel)
        child.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("a child's request does not cancel the child itself; it follows its parent (C5)")
    func childRequestDoesNotCancelChild() {
        let (child, resolver, _) = withSealedParent(IntPromise.self) { $0.map(on: .immediate) { $0 + 1 } }
        child.requestCancel()
        #expect(child.result == nil)
        resolver.fulfill(with: 1)
        #expect(child.result == .value(2))
    }

    @Test(
        "after a propagated cancel, a mapResult child is fulfilled and a throwing tryFlatMapResult child rejected (C5)")
    func cancelledParentStillRunsResultCallbacks() {
        let (children, resolver, _) = withSealedParent(IntPromise.self) { parent in
            (
                parent.mapResult(on: .immediate) { result -> PromiseResult<String, String> in .value(describe(result))
                },
                parent.tryFlatMapResult(on: .immediate) { _ -> Promise<Int, TestError> in throw TestError.thrown }
            )
        }
        children.0.requestCancel()
        children.1.requestCancel()
        #expect(resolver.hasRequestedCancel)
        resolver.cancel()
        #expect(children.0.result == .value("cancelled"))
        #expect(describe(children.1.result) == "error(thrown)")
    }

    @Test("a parent still referenced is not cancelled until its last handle goes (D2)")
    func referencedParentIsNotCancelled() {
        var handle: IntPromise?
        let resolver: IntPromise.Resolver
        (handle, resolver) = IntPromise.makeWithResolver()
        let requests = Recorder<String>()
        resolver.onRequestCancel(on: .immediate) { _ in requests.record("request") }
        let child = handle!.map(on: .immediate) { $0 }
        var copy = handle
        child.requestCancel()
        #expect(requests.values.isEmpty)
        handle = nil
        #expect(requests.values.isEmpty, "a copy of the handle is still alive")
        #expect(copy != nil)
        copy = nil
        #expect(requests.count == 1)
    }

    @Test("a sealed promise with no observers is never cancelled automatically (D2)")
    func unobservedPromiseIsNeverCancelled() {
        let (_, resolver, requests) = withSealedParent(IntPromise.self) { _ in () }
        #expect(requests.values.isEmpty)
        #expect(!resolver.hasRequestedCancel)
    }

    @Test("with two children, the parent is cancelled only after both request cancellation (D2)")
    func cancelAfterAllObservers() {
        let (children, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.map(on: .immediate) { $0 }, parent.then(on: .immediate) { _ in })
        }
        children.0.requestCancel()
        #expect(requests.values.isEmpty, "the second child is still interested")
        children.1.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("a child that requests cancellation twice decrements its parent only once (D1)")
    func repeatedChildRequestCountsOnce() {
        let (children, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.map(on: .immediate) { $0 }, parent.map(on: .immediate) { $0 })
        }
        children.0.requestCancel()
        children.0.requestCancel()
        children.0.cancellable.requestCancel()
        #expect(requests.values.isEmpty, "the second child still counts")
        children.1.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("a request on the onCancel promise itself counts once, whatever else happens (D5)")
    func onCancelRequestedTwice() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.onCancel(on: .immediate) {}, parent.map(on: .immediate) { $0 }, parent.map(on: .immediate) { $0 })
        }
        built.0.requestCancel()
        built.0.requestCancel()
        built.1.requestCancel()
        #expect(requests.values.isEmpty, "the third child is still interested")
        built.2.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("a parent with a second observer that never cancels is not cancelled (D2)")
    func secondObserverBlocksPropagation() {
        let (children, resolver, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.map(on: .immediate) { $0 }, parent.always(on: .immediate) { _ in })
        }
        children.0.requestCancel()
        #expect(requests.values.isEmpty)
        resolver.fulfill(with: 3)
        #expect(children.0.result == .value(3))
        #expect(children.1.result == .value(3))
    }

    // MARK: D3: every propagating registration

    enum PropagatingMethod: String, CaseIterable, Sendable {
        case then, map, flatMap, `catch`, recover, mapError, flatMapError, tryMapError, tryFlatMapError
        case always, mapResult, flatMapResult, tryMapResult, tryFlatMapResult
        case tryThen, tryMap, tryFlatMap, tryRecover, makeChild, resolveWithPromise

        /// Registers this method on `parent` and returns a handle to request the child's
        /// cancellation.
        func attach(to parent: StdPromise<Int>) -> PromiseCancellable {
            let context = PromiseContext.immediate
            switch self {
            case .then: return parent.then(on: context) { _ in }.cancellable
            case .map: return parent.map(on: context) { $0 }.cancellable
            case .flatMap: return parent.flatMap(on: context) { StdPromise(fulfilled: $0) }.cancellable
            case .catch: return parent.catch(on: context) { _ in }.cancellable
            case .recover: return parent.recover(on: context) { _ in 0 }.cancellable
            case .mapError: return parent.mapError(on: context) { $0 }.cancellable
            case .flatMapError: return parent.flatMapError(on: context) { StdPromise(rejected: $0) }.cancellable
            case .tryMapError: return parent.tryMapError(on: context) { _ in TestError.other }.cancellable
            case .tryFlatMapError:
                return parent.tryFlatMapError(on: context) { _ in Promise<Int, TestError>(rejected: .other) }
                    .cancellable
            case .always: return parent.always(on: context) { _ in }.cancellable
            case .mapResult: return parent.mapResult(on: context) { $0 }.cancellable
            case .flatMapResult: return parent.flatMapResult(on: context) { StdPromise(with: $0) }.cancellable
            case .tryMapResult:
                return parent.tryMapResult(on: context) { _ in PromiseResult<Int, TestError>.value(0) }.cancellable
            case .tryFlatMapResult:
                return parent.tryFlatMapResult(on: context) { _ in Promise<Int, TestError>(fulfilled: 0) }.cancellable
            case .tryThen: return parent.tryThen(on: context) { _ in }.cancellable
            case .tryMap: return parent.tryMap(on: context) { $0 }.cancellable
            case .tryFlatMap:
                return parent.tryFlatMap(on: context) { Promise<Int, TestError>(fulfilled: $0) }.cancellable
            case .tryRecover: return parent.tryRecover(on: context) { _ in 0 }.cancellable
            case .makeChild: return parent.makeChild().cancellable
            case .resolveWithPromise:
                let (adopter, resolver) = StdPromise<Int>.makeWithResolver()
                resolver.resolve(with: parent)
                return adopter.cancellable
            }
        }
    }

    @Test(
        "each propagating method passes its child's cancel request to a sealed parent (D3)",
        arguments: PropagatingMethod.allCases)
    func propagatingMethodCancelsParent(method: PropagatingMethod) {
        let (cancellable, _, requests) = withSealedParent(StdPromise<Int>.self) { method.attach(to: $0) }
        #expect(requests.values.isEmpty)
        cancellable.requestCancel()
        #expect(requests.count == 1)
    }

    @Test(
        "each propagating method counts as an observer that blocks propagation (D3)",
        arguments: PropagatingMethod.allCases)
    func propagatingMethodBlocksPropagation(method: PropagatingMethod) {
        let (built, _, requests) = withSealedParent(StdPromise<Int>.self) { parent in
            (method.attach(to: parent), parent.map(on: .immediate) { $0 })
        }
        built.1.requestCancel()
        #expect(requests.values.isEmpty, "\(method) should still count as an interested observer")
        built.0.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("upcast of a typed error propagates like any child (D3, D9)")
    func typedUpcastPropagatesNormally() {
        let (built, _, requests) = withSealedParent(Promise<Int, TestError>.self) { parent in
            (parent.upcast, parent.map(on: .immediate) { $0 })
        }
        built.0.requestCancel()
        #expect(requests.values.isEmpty)
        built.1.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("upcast of a NoError promise cancels the parent directly, whatever other children exist (D9)")
    func noErrorUpcastCancelsParentDirectly() {
        let (built, _, requests) = withSealedParent(Promise<Int, NoError>.self) { parent in
            (parent.upcast, parent.map(on: .immediate) { $0 })
        }
        built.0.requestCancel()
        #expect(requests.count == 1)
        withExtendedLifetime(built.1) {}
    }

    // MARK: D3: the flatMap family and resolve(with:) (v1.4.0)

    @Test("a cancel request on flatMap's result reaches the sealed inner promise it adopted (D3)")
    func flatMapCancelReachesInnerPromise() {
        let innerRequests = Recorder<String>()
        let (outer, resolver, requests) = withSealedParent(IntPromise.self) { parent in
            parent.flatMap(on: .immediate) { _ -> IntPromise in
                IntPromise(on: .immediate) { innerResolver in
                    // Captures its resolver, like real pending work, so the inner promise lives
                    // while its handle is gone (A3).
                    innerResolver.onRequestCancel(on: .immediate) { _ in
                        withExtendedLifetime(innerResolver) {}
                        innerRequests.record("inner")
                    }
                }
            }
        }
        resolver.fulfill(with: 1)
        #expect(outer.result == nil)
        outer.requestCancel()
        #expect(innerRequests.values == ["inner"])
        #expect(requests.values.isEmpty, "the parent is already fulfilled")
    }

    @Test("an inner promise whose handle is still held is cancelled through flatMap only once the handle goes (D3)")
    func flatMapInnerWithLiveHandle() {
        let innerRequests = Recorder<String>()
        var innerHandle: IntPromise?
        let innerResolver: IntPromise.Resolver
        (innerHandle, innerResolver) = IntPromise.makeWithResolver()
        innerResolver.onRequestCancel(on: .immediate) { _ in innerRequests.record("inner") }
        let (outer, resolver, _) = withSealedParent(IntPromise.self) { parent in
            parent.flatMap(on: .immediate) { [innerHandle] _ in innerHandle! }
        }
        resolver.fulfill(with: 1)
        outer.requestCancel()
        #expect(innerRequests.values.isEmpty, "the test still holds the inner promise")
        innerHandle = nil
        #expect(innerRequests.values == ["inner"])
        withExtendedLifetime(innerResolver) {}
    }

    @Test("an inner promise with another observer is not cancelled through flatMap (D3)")
    func flatMapInnerWithOtherObserverIsNotCancelled() {
        let innerRequests = Recorder<String>()
        let keeper = Locked<IntPromise?>(nil)
        let (outer, resolver, _) = withSealedParent(IntPromise.self) { parent in
            parent.flatMap(on: .immediate) { _ -> IntPromise in
                let inner = IntPromise(on: .immediate) { innerResolver in
                    // Captures its resolver, like real pending work, so the inner promise lives
                    // while its handle is gone (A3).
                    innerResolver.onRequestCancel(on: .immediate) { _ in
                        withExtendedLifetime(innerResolver) {}
                        innerRequests.record("inner")
                    }
                }
                keeper.value = inner.map(on: .immediate) { $0 }
                return inner
            }
        }
        resolver.fulfill(with: 1)
        outer.requestCancel()
        #expect(innerRequests.values.isEmpty)
        #expect(keeper.value != nil)
    }

    @Test("a cancel requested on flatMap's result before the inner promise exists reaches it once piped (D3)")
    func earlyCancelReachesLaterInnerPromise() {
        let innerRequests = Recorder<String>()
        let (outer, resolver, requests) = withSealedParent(IntPromise.self) { parent in
            parent.flatMap(on: .immediate) { _ -> IntPromise in
                IntPromise(on: .immediate) { innerResolver in
                    // Captures its resolver, like real pending work, so the inner promise lives
                    // while its handle is gone (A3).
                    innerResolver.onRequestCancel(on: .immediate) { _ in
                        withExtendedLifetime(innerResolver) {}
                        innerRequests.record("inner")
                    }
                }
            }
        }
        outer.requestCancel()
        #expect(requests.count == 1)
        resolver.fulfill(with: 1)
        #expect(innerRequests.values == ["inner"])
    }

    @Test("resolve(with: promise) participates like a child: another child blocks propagation (D3, v1.4.0)")
    func resolveWithPromiseParticipatesLikeAChild() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            let (adopter, adopterResolver) = IntPromise.makeWithResolver()
            adopterResolver.resolve(with: parent)
            return (adopter, parent.map(on: .immediate) { $0 })
        }
        built.0.requestCancel()
        #expect(requests.values.isEmpty)
        built.1.requestCancel()
        #expect(requests.count == 1)
    }

    @Test(
        "a cancel request on a resolve(with:) receiver runs its earlier onRequestCancel handler before it reaches the other promise (C1, A7)"
    )
    func resolveWithLinkRunsAfterEarlierHandlers() {
        let events = Recorder<String>()
        let (other, otherResolver) = IntPromise.makeWithResolver()
        // Cancelling `other` resolves the receiver at once (it adopts `other`'s result).
        otherResolver.onRequestCancel(on: .immediate) { resolver in
            events.record("other asked")
            resolver.cancel()
        }
        let (receiver, receiverResolver) = IntPromise.makeWithResolver()
        receiverResolver.onRequestCancel(on: .immediate) { _ in
            events.record("receiver asked, resolved: \(receiver.result != nil)")
        }
        receiver.tap(on: .immediate) { events.record("receiver \(describe($0))") }
        receiverResolver.resolve(with: other)
        _ = consume other  // sealed: the receiver is its only observer

        receiver.requestCancel()
        // Registration order, as in one list: the handler registered before resolve(with:) runs
        // first, and sees the receiver still unresolved; then the link passes the request on.
        #expect(events.values == ["receiver asked, resolved: false", "other asked", "receiver cancelled"])
    }

    // MARK: D4: tap

    @Test("tap(on:) does not block propagation when the other children cancel (D4)")
    func tapDoesNotBlockPropagation() {
        let (child, _, requests) = withSealedParent(IntPromise.self) { parent in
            parent.tap(on: .immediate) { _ in }
            return parent.map(on: .immediate) { $0 }
        }
        child.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("tap() does not block propagation either (D4)")
    func tapWithoutCallbackDoesNotBlockPropagation() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.tap(), parent.map(on: .immediate) { $0 })
        }
        built.1.requestCancel()
        #expect(requests.count == 1)
        withExtendedLifetime(built.0) {}
    }

    @Test("a parent observed only by taps is never cancelled automatically (D4)")
    func tapsAloneNeverTriggerPropagation() {
        let (tapped, _, requests) = withSealedParent(IntPromise.self) { parent in
            parent.tap(on: .immediate) { _ in }
            return parent.tap()
        }
        tapped.requestCancel()
        #expect(requests.values.isEmpty)
        #expect(tapped.result == nil, "tap() ignores requestCancel completely")
    }

    // MARK: D5: onCancel

    @Test("onCancel does not block propagation when the other children cancel (D5)")
    func onCancelDoesNotBlockPropagation() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.onCancel(on: .immediate) {}, parent.map(on: .immediate) { $0 })
        }
        built.1.requestCancel()
        #expect(requests.count == 1)
        withExtendedLifetime(built.0) {}
    }

    @Test("a cancel request on an onCancel promise that is the only child cancels the parent (D5)")
    func onCancelAsOnlyChildPropagates() {
        let (child, resolver, requests) = withSealedParent(IntPromise.self) { $0.onCancel(on: .immediate) {} }
        child.requestCancel()
        #expect(requests.count == 1)
        resolver.cancel()
        #expect(child.result == .cancelled)
    }

    @Test("a cancel request on an onCancel promise does nothing while another child is live (D5)")
    func onCancelWithLiveSiblingDoesNotPropagate() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.onCancel(on: .immediate) {}, parent.map(on: .immediate) { $0 })
        }
        built.0.requestCancel()
        #expect(requests.values.isEmpty)
        withExtendedLifetime(built.1) {}
    }

    // MARK: D6: ignoringCancel

    @Test("ignoringCancel pins the parent: it is never cancelled automatically afterwards (D6)")
    func ignoringCancelPinsParent() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            (parent.ignoringCancel(), parent.map(on: .immediate) { $0 })
        }
        built.1.requestCancel()
        built.0.requestCancel()
        #expect(requests.values.isEmpty)
    }

    @Test("ignoringCancel's promise is still cancelled when the parent is (D6)")
    func ignoringCancelFollowsParentCancellation() {
        let (ignoring, resolver, _) = withSealedParent(IntPromise.self) { $0.ignoringCancel() }
        ignoring.requestCancel()
        #expect(ignoring.result == nil)
        resolver.cancel()
        #expect(ignoring.result == .cancelled)
    }

    // MARK: D7: makeChild

    @Test(
        "makeChild of a resolved parent is already resolved; of a pending one, resolves inside the parent's resolution (D7)"
    )
    func makeChildAdoptsResult() {
        #expect(IntPromise(fulfilled: 4).makeChild().result == .value(4))
        let (parent, resolver) = IntPromise.makeWithResolver()
        let child = parent.makeChild()
        #expect(child.result == nil)
        resolver.reject(with: "no")
        #expect(child.result == .error("no"))
    }

    // MARK: D8: propagatingCancellation

    @Test("propagatingCancellation: when all its children cancel, the callback runs and then the parent is asked (D8)")
    func propagatingCancellationAfterAllChildren() {
        let order = Recorder<String>()
        let (propagating, resolver, _) = withSealedParent(IntPromise.self) { parent in
            parent.propagatingCancellation(on: .immediate) { _ in order.record("callback") }
        }
        resolver.onRequestCancel(on: .immediate) { _ in order.record("parent request") }
        let first = propagating.makeChild()
        let second = propagating.makeChild()
        first.requestCancel()
        #expect(order.values.isEmpty)
        second.requestCancel()
        #expect(order.values == ["callback", "parent request"])
        withExtendedLifetime(propagating) {}
    }

    @Test("propagatingCancellation passes the promise itself to the callback (D8)")
    func propagatingCancellationPassesItself() {
        let (parent, _) = IntPromise.makeWithResolver()
        let seen = Locked<IntPromise?>(nil)
        let propagating = parent.propagatingCancellation(on: .immediate) { seen.value = $0 }
        propagating.requestCancel()
        #expect(seen.value == propagating)
    }

    @Test(
        "propagatingCancellation: a direct request runs the callback and propagates, even though the caller holds it (D8)"
    )
    func propagatingCancellationDirectRequest() {
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            parent.propagatingCancellation(on: .immediate) { _ in }
        }
        built.requestCancel()
        #expect(requests.count == 1)
    }

    @Test("propagatingCancellation with no children is never cancelled automatically (D8)")
    func propagatingCancellationWithoutChildren() {
        let calls = Recorder<String>()
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            parent.propagatingCancellation(on: .immediate) { _ in calls.record("callback") }
        }
        #expect(calls.values.isEmpty)
        #expect(requests.values.isEmpty)
        withExtendedLifetime(built) {}
    }

    @Test("propagatingCancellation: another child of the receiver still prevents its cancellation (D8)")
    func propagatingCancellationRespectsSiblings() {
        let calls = Recorder<String>()
        let (built, _, requests) = withSealedParent(IntPromise.self) { parent in
            (
                parent.propagatingCancellation(on: .immediate) { _ in calls.record("callback") },
                parent.map(on: .immediate) { $0 }
            )
        }
        built.0.makeChild().requestCancel()
        #expect(calls.values == ["callback"])
        #expect(requests.values.isEmpty)
        withExtendedLifetime(built.1) {}
    }

    @Test("propagatingCancellation keeps itself alive until it resolves (D8)")
    func propagatingCancellationKeepsItselfAlive() {
        let calls = Recorder<String>()
        let (child, _, requests) = withSealedParent(IntPromise.self) { parent in
            parent.propagatingCancellation(on: .immediate) { _ in calls.record("callback") }.makeChild()
        }
        child.requestCancel()
        #expect(calls.values == ["callback"])
        #expect(requests.count == 1)
    }

    @Test("propagatingCancellation: children added after cancellation are already cancelled (D8)")
    func propagatingCancellationLateChildren() {
        let (parent, resolver) = IntPromise.makeWithResolver()
        let propagating = parent.propagatingCancellation(on: .immediate) { _ in }
        resolver.cancel()
        #expect(propagating.makeChild().result == .cancelled)
    }

    @Test("propagatingCancellation on a queue: the parent is asked only after the callback ran there (D8)")
    func propagatingCancellationOnQueue() async {
        let queue = makeTaggedQueue("propagation.callback")
        let order = Recorder<String>()
        let (built, resolver, requests) = withSealedParent(IntPromise.self) { parent in
            parent.propagatingCancellation(on: .queue(queue)) { _ in
                order.record("callback on \(currentQueueTag ?? "-")")
            }
        }
        resolver.onRequestCancel(on: .immediate) { _ in order.record("parent request") }
        built.requestCancel()
        #expect(await eventually { order.count == 2 })
        #expect(order.values == ["callback on propagation.callback", "parent request"])
        #expect(requests.count == 1)
    }
}
