import CTomorrowlandSupport

// A child promise must be able to pass a cancel request to its upstream, but must never keep the
// upstream alive (an upstream whose resolver and handles are gone is cancelled when it dies, and
// that cancellation is what resolves the child). That is a weak reference. Swift's `weak`
// moves the target's reference counts into a side table: one more allocation per upstream and
// slow-path retain/release on it forever after, which measured as 40% of a `map` link. These
// runtime entry points give the same guarantee without a side table: an unowned reference keeps
// the object's memory (not the object) alive with the inline unowned count, and try-retain
// returns a strong reference only if the object is not being deinitialized. They are the
// functions compiled Swift code calls for `unowned` and `weak`; their C signatures take and
// return the object pointer (declared in CTomorrowlandSupport.h).

/// A reference to a promise's core that does not keep it alive: ``load()`` answers `nil` once
/// the core is being destroyed.
///
/// - Important: A value type with manual ownership: call ``release()`` exactly once. Use
///   ``UpstreamReferenceBox`` where a class with a deinit is more convenient.
@usableFromInline
struct UnownedCoreReference: @unchecked Sendable {
    // Sendable: the runtime functions are thread-safe; the pointer is immutable.
    private let pointer: UnsafeMutableRawPointer

    init(_ core: PromiseCore) {
        pointer = Unmanaged.passUnretained(core).toOpaque()
        twl_unowned_retain(pointer)
    }

    /// A strong reference to the core, or `nil` if it is being (or has been) destroyed.
    @usableFromInline
    func load() -> PromiseCore? {
        guard twl_try_retain(pointer) else { return nil }
        return Unmanaged<PromiseCore>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Gives up the reference. Call exactly once.
    func release() {
        twl_unowned_release(pointer)
    }
}

/// An ``UnownedCoreReference`` released by deinit, for closures that capture it.
@usableFromInline
final class UpstreamReferenceBox: Sendable {
    @usableFromInline
    let reference: UnownedCoreReference

    @usableFromInline
    init(_ core: PromiseCore) {
        reference = UnownedCoreReference(core)
    }

    deinit {
        reference.release()
    }
}
