import Synchronization

/// Something a token can ask to cancel: a promise's storage.
@usableFromInline
protocol PromiseCancelRequestable: AnyObject, Sendable {
    func requestCancel()
}


/// The state of a ``PromiseInvalidationToken``: its generation, the promises to cancel on
/// invalidation, and the tokens chained to it.
/// `@unchecked Sendable`: `lists` is only touched while holding `lock`.
@usableFromInline
final class TokenBox: @unchecked Sendable {
    /// Bumped (wrapping) by every invalidation. Callbacks compare it with the value they saw at
    /// registration.
    @usableFromInline
    let generation = Atomic<UInt>(0)
    private let lock = SpinLock()
    private var lists = Lists()

    private struct Lists {
        /// Registration order. Entries hold promises weakly and are used up by an invalidation.
        var cancellables: [WeakCancellable] = []
        /// Chained tokens, registration order, held weakly.
        var children: [ChildLink] = []
    }

    private struct WeakCancellable {
        weak var target: (any PromiseCancelRequestable)?
    }

    private struct ChildLink {
        weak var token: TokenBox?
        let forwardsCancelWithoutInvalidating: Bool
    }

    /// Invalidates (or only cancels, when `bumpingGeneration` is false) and forwards to the
    /// chained tokens.
    func invalidate(bumpingGeneration: Bool) {
        if bumpingGeneration {
            generation.wrappingAdd(1, ordering: .releasing)
        }
        // Take the registrations and a snapshot of the chain before calling out.
        let (cancellables, children) = lock.withLock {
            let taken = lists.cancellables
            lists.cancellables = []
            return (taken.compactMap(\.target), lists.children.compactMap { link -> (TokenBox, Bool)? in
                link.token.map { ($0, link.forwardsCancelWithoutInvalidating) }
            })
        }
        for cancellable in cancellables {
            cancellable.requestCancel()
        }
        for (child, forwards) in children where bumpingGeneration || forwards {
            child.invalidate(bumpingGeneration: bumpingGeneration)
        }
    }

    /// Registers `target` for a cancel request at the next invalidation. Dead registrations at the
    /// newest end of the list are pruned first (stopping at the first live one), so a token used
    /// for many short-lived promises does not grow.
    func registerCancellation(of target: any PromiseCancelRequestable) {
        lock.withLock {
            while let last = lists.cancellables.last, last.target == nil {
                lists.cancellables.removeLast()
            }
            lists.cancellables.append(WeakCancellable(target: target))
        }
    }

    /// Chains `child` to this token, pruning dead links at the newest end first.
    func addChild(_ child: TokenBox, forwardingCancelWithoutInvalidating: Bool) {
        lock.withLock {
            while let last = lists.children.last, last.token == nil {
                lists.children.removeLast()
            }
            lists.children.append(ChildLink(token: child, forwardsCancelWithoutInvalidating: forwardingCancelWithoutInvalidating))
        }
    }

    var debugDescription: String {
        let (callbacks, chain) = lock.withLock { (lists.cancellables.count, lists.children.count) }
        func nodes(_ count: Int) -> String { count == 1 ? "1 node" : "\(count) nodes" }
        return "<TokenBox: \(address(of: self)) generation=\(generation.load(ordering: .relaxed)) "
            + "callbackLinkedList=(\(nodes(callbacks))) tokenChainLinkedList=(\(nodes(chain)))>"
    }
}
