/// A callback node that resolves another promise of the same type with the source's result,
/// inline and without a context hop (`makeChild`, `tap()`, `ignoringCancel`,
/// `Resolver.resolve(with:)`).
@usableFromInline
final class PipeNode: PromiseCallbackNode, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    @usableFromInline
    let target: PromiseCore
    /// Copies the result of a resolved source into the target and settles it. A thin function
    /// made where the types are known, so that the copy is specialised.
    @usableFromInline
    let transfer: (_ source: PromiseCore, _ target: PromiseCore) -> ReadyCallbacks?

    @usableFromInline
    init(target: PromiseCore, transfer: @escaping (_ source: PromiseCore, _ target: PromiseCore) -> ReadyCallbacks?) {
        self.target = target
        self.transfer = transfer
    }

    @usableFromInline
    override func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        transfer(source, target)
    }

    /// The target may be linked to the dying upstream (`makeChild`, `resolve(with:)`).
    override func unlinkFromDyingUpstream(_ upstream: UnsafeMutableRawPointer) {
        target.unlinkFromDyingUpstream(upstream)
    }

    /// ``fire(source:isSynchronous:)`` from a drain, which hands its reference over: released
    /// here (an override of its own, so that the drain's call is one dynamic dispatch).
    @usableFromInline
    override func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        // The drain's reference, owned here: released as this call ends.
        // CoreInvariants: "Ownership in the drain".
        let owned = Unmanaged.passUnretained(self).takeRetainedValue()
        return owned.fire(source: source, isSynchronous: false)
    }
}

extension ResultBox {
    /// A pipe node that settles this box with the result of a source of the same type.
    @inlinable
    final func pipeNode() -> PipeNode {
        PipeNode(target: self) { source, target in
            // `target` is this very box; `source` is a resolved box of the same type (a pipe joins equals).
            unsafeDowncast(target, to: ResultBox<Result>.self).settle(
                ResultBox<Result>.resolvedResult(of: source))
        }
    }

    /// Pipes `inner` into this box, as a propagating observer of `inner` (`resolve(with:)`;
    /// derived promises use ``DerivedBox/adoptAfterCallback(_:)``).
    ///
    /// - Returns: This box's callbacks, ready to run, when `inner` was already resolved.
    @inlinable
    final func adopt(_ inner: ResultBox<Result>) -> ReadyCallbacks? {
        propagateCancel(to: inner)
        return inner.registerReturningReady(pipeNode())
    }
}
