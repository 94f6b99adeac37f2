import CTomorrowlandSupport

/// A reference to an ``EventLoop`` that does not keep it alive: ``load()`` answers `nil` once the
/// loop is being destroyed.
///
/// Timer handles and watchers need their loop to cancel, but must not keep it alive. Swift's
/// `weak` would do, but the first weak reference moves the loop's reference counts to a side
/// table, and every retain and release of the loop takes the slow path from then on (measured:
/// a tenth of the time of a timer's schedule and cancel, and slower submissions). The runtime's
/// unowned count and try-retain give the same guarantee inline, as the core's
/// `UnownedCoreReference` does for promises.
///
/// - Important: A value type with manual ownership: its owner calls ``release()`` exactly once,
///   in its deinit.
struct UnownedLoopReference: @unchecked Sendable {
    // Sendable: the runtime functions are thread-safe; the pointer is immutable.
    private let pointer: UnsafeMutableRawPointer

    init(_ loop: EventLoop) {
        pointer = Unmanaged.passUnretained(loop).toOpaque()
        twl_unowned_retain(pointer)
    }

    /// A strong reference to the loop, or `nil` if it is being (or has been) destroyed.
    func load() -> EventLoop? {
        guard twl_try_retain(pointer) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Gives up the reference. Call exactly once.
    func release() {
        twl_unowned_release(pointer)
    }
}
