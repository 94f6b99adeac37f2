/// The handle object that all copies of one `Promise` value share.
///
/// When the last copy goes away, its deinit seals the promise: from then on, it is cancelled
/// automatically once every propagating observer has requested cancellation (D1). Non-generic,
/// so creating one costs no metadata lookup.
@usableFromInline
final class PromiseSeal: Sendable {
    @usableFromInline
    let core: PromiseCore

    @usableFromInline
    init(core: PromiseCore) {
        self.core = core
    }

    deinit {
        core.seal()
    }
}
