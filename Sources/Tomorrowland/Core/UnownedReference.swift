import CTomorrowlandSupport

// `when` must be able to pass cancel requests to its inputs, a promise linked to a second upstream
// through a cancel handler must reach it, and a loop's timer handle or watcher must be able to
// reach its loop, but none may keep the other alive. (A child's one inline link to its upstream
// needs no count at all: see `UpstreamLink`.) That is a weak
// reference. Swift's `weak` moves the target's reference counts into a side table: one more
// allocation per target and slow-path retain/release on it forever after, a large share of a
// `map` link and of a timer's schedule and cancel on a loop (and slower submissions). These
// runtime entry points give the same guarantee without a side table: an
// unowned reference keeps the object's memory (not the object) alive with the inline unowned
// count, and try-retain returns a strong reference only if the object is not being
// deinitialized. They are the functions compiled Swift code calls for `unowned` and `weak`; their
// C signatures take and return the object pointer (declared in CTomorrowlandSupport.h).

/// A reference that does not keep its object alive: ``load()`` answers `nil` once the object is
/// being destroyed. The library's one counted unowned-reference type: `when`'s inputs, the
/// cancel-handler link to a second upstream (`UpstreamReferenceBox`), a loop's timer handles and
/// watchers. (A child's inline link to its upstream is an `UpstreamLink`, which counts nothing.)
///
/// - Important: A value type with manual ownership: its owner calls ``release()`` exactly once,
///   in its deinit (or use `UpstreamReferenceBox`, which does).
@usableFromInline
package struct UnownedReference<Object: AnyObject>: @unchecked Sendable {
    // Sendable: the runtime functions are thread-safe; the pointer is immutable. The object's own
    // thread-safety is the holder's business, as with a strong reference.
    @usableFromInline
    let pointer: UnsafeMutableRawPointer

    /// An unowned reference to `object`.
    @inlinable
    package init(_ object: Object) {
        // CoreInvariants: "Unowned references".
        pointer = Unmanaged.passUnretained(object).toOpaque()
        twl_unowned_retain(pointer)
    }

    /// A strong reference to the object, or `nil` if it is being (or has been) destroyed.
    @inlinable
    package func load() -> Object? {
        guard twl_try_retain(pointer) else { return nil }
        // CoreInvariants: "Unowned references": the try-retain succeeded, so this reference is ours.
        return Unmanaged<Object>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Gives up the reference. Call exactly once.
    @inlinable
    package func release() {
        twl_unowned_release(pointer)
    }
}
