/// The handle object that all copies of one `Promise` value share.
///
/// When the last copy goes away, its deinit seals the promise: from then on, it is cancelled
/// automatically once every propagating observer has requested cancellation (D1). Non-generic,
/// so creating one costs no metadata lookup.
@usableFromInline
final class PromiseSeal: @unchecked Sendable {
    // @unchecked Sendable: `core` changes only in ``retarget(to:)``, whose caller holds the only
    // reference to this object, so no other thread can read it then (as copy-on-write).
    @usableFromInline
    @exclusivity(unchecked)
    final var core: PromiseCore

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

    /// Registers `node` on this handle's core, borrowed as in ``withCore(_:)``; the list takes over
    /// the caller's reference to `node` (``PromiseCore/register(_:)``).
    @inlinable
    @inline(__always)
    func register(_ node: consuming PromiseCallbackNode) {
        // Carried into the closure unmanaged: a closure cannot consume what it captures, and a
        // captured copy would be retained for the list.
        let node = Unmanaged.passRetained(consume node)
        withCore { $0.register(node.takeRetainedValue()) }
    }

    /// Makes this handle the handle of `newCore`, a promise derived from ``core`` just now, and
    /// seals the old core as this handle's death would: a chain (`promise = promise.map { … }`)
    /// then hands one handle object down its links instead of allocating one per link.
    ///
    /// - Important: The caller must hold the only reference to this handle
    ///   (`isKnownUniquelyReferenced`), so that no copy of the old `Promise` value is left: it
    ///   was consumed. `newCore` must have no handle yet; the reference passed is taken over.
    @usableFromInline
    func retarget(to newCore: consuming PromiseCore) {
        var old = consume newCore
        swap(&core, &old)
        // D1: the consumed handle was the old promise's last one. Its child is counted by now,
        // so this never cancels it; it only lets a later cancel request of the child through.
        old.seal()
    }

    deinit {
        // CoreInvariants: "Ownership in the drain" (borrowing).
        // Through `Unmanaged`: calling `core.seal()` directly retains and releases `core` around
        // the call, although this object keeps it alive until the deinit returns.
        Unmanaged.passUnretained(core)._withUnsafeGuaranteedRef { $0.seal() }
    }
}
