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

    /// Calls `body` with this handle's core, borrowed: no retain and release around the call.
    ///
    /// Reading `core` for a call otherwise retains it for the call's length, although the caller's
    /// handle (this object) keeps it alive until the call returns.
    @inlinable
    @inline(__always)
    func withCore<R>(_ body: (PromiseCore) -> R) -> R {
        // CoreInvariants: "Ownership in the drain" (borrowing): this seal holds `core` for the call.
        Unmanaged.passUnretained(core)._withUnsafeGuaranteedRef(body)
    }

    deinit {
        // CoreInvariants: "Ownership in the drain" (borrowing).
        // Through `Unmanaged`: calling `core.seal()` directly retains and releases `core` around
        // the call, although this object keeps it alive until the deinit returns.
        Unmanaged.passUnretained(core)._withUnsafeGuaranteedRef { $0.seal() }
    }
}
