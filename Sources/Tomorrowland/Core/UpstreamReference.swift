/// An unowned reference to a promise's core released by deinit, for closures that capture it.
@usableFromInline
final class UpstreamReferenceBox: Sendable {
    @usableFromInline
    let reference: UnownedReference<PromiseCore>

    @usableFromInline
    init(_ core: PromiseCore) {
        reference = UnownedReference(core)
    }

    deinit {
        reference.release()
    }
}
