import CTomorrowlandSupport

/// A promise's link to the upstream it observes with cancel propagation: a pointer to the
/// upstream's core that keeps neither the core nor its memory alive, and costs no reference
/// count at all.
///
/// ``UnownedReference`` keeps the target's memory alive with the runtime's unowned count; for
/// this link, whose every promise derived by a callback has one, that count would cost every
/// `map` link an unowned retain when it links and a release when it resolves. The link does not
/// need it, because of how links are made and undone (the **link
/// rule**):
///
/// 1. A promise links to an upstream `U` only while it puts itself, or a ``PipeNode`` into
///    itself, in `U`'s callback list (`registerNewChild`, `propagateCancel(to:)` followed by a
///    registration on `U`); `U` is alive during that call (its caller holds it).
/// 2. The link is undone under the linked promise's lock: when it resolves
///    (`markResolvedLocked`), when a cancel request passes it on (`requestCancel`), when it is
///    replaced, or when `U` says it is going away (``PromiseCallbackNode/unlinkFromDyingUpstream(_:)``).
/// 3. `U`'s memory outlives every link to it:
///    - `U` resolves: each node in its list fires with `U` as its source, and whatever the node
///      does next holds `U` until the linked promise has resolved (the drain's `ReadyCallbacks`,
///      a job's source, a batch's source), except a node that unlinks the promise when it fires
///      (`delay`);
///    - `U` dies unresolved: its deinit unlinks every node in its list, under each one's lock,
///      before it runs them with a stand-in source and before its memory is freed.
///
/// So a thread that holds the linked promise's lock and finds the link set may touch `U`'s
/// memory: ``retainLocked()`` answers `nil` when `U` is already being destroyed, a strong
/// reference otherwise.
@usableFromInline
struct UpstreamLink: @unchecked Sendable {
    // CoreInvariants: "The link rule" (the same rule as above).
    // Sendable: the pointer is only dereferenced under the linked promise's lock, by the rule
    // above; the runtime's try-retain is thread-safe.
    @usableFromInline
    let pointer: UnsafeMutableRawPointer

    /// A link to `upstream`; see the link rule for when a promise may make one.
    @inlinable
    init(_ upstream: PromiseCore) {
        pointer = Unmanaged.passUnretained(upstream).toOpaque()
    }

    /// A strong reference to the upstream, or `nil` if it is being destroyed.
    ///
    /// - Important: Call with the linked promise's lock held, the link still set (the link rule).
    func retainLocked() -> PromiseCore? {
        guard twl_try_retain(pointer) else { return nil }
        // CoreInvariants: "The link rule": the try-retain succeeded, so this reference is ours.
        return Unmanaged<PromiseCore>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Whether this is a link to the core at `pointer`.
    func links(to upstream: UnsafeMutableRawPointer) -> Bool {
        pointer == upstream
    }
}
