import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// The callback context of the events a loop made with ``EventLoop/init(borrowing:)`` keeps on
/// the host's base (its backend's wake-up and timer); it outlives the loop.
///
/// The host's thread runs a borrowed base whenever it likes, so the last reference to the loop
/// may go on another thread while the host is inside `event_base_loop`. The loop's `deinit`
/// cannot free its events there (libevent objects are not thread-safe without `evthread`), and
/// the host may call one of them back at any moment, so they cannot carry the loop itself,
/// unretained, as an owned base's events do. They carry this object, retained: it reaches the
/// loop through an unowned reference that fails once the loop's deinit has begun, and from then
/// on frees, on the host's thread, the events and the `eventfd` that the deinit left to it.
final class BorrowedLoopEvents: @unchecked Sendable {
    // `@unchecked Sendable`: `loop` and `backend` are immutable (`loop` thread-safe, `backend`
    // read only while `loop` is held); `orphans` is under its lock.
    // LoopInvariants: "Unretained callback arguments" (the borrowed-base exception).

    /// What a loop destroyed without ``EventLoop/shutdown()`` leaves to the host's thread.
    struct Orphans {
        /// The loop's own events and its watchers' events, still on the host's base.
        var events: [OpaquePointer]
        /// The watchers whose events are in ``events``: their callbacks carry them, unretained.
        var watchers: [EventLoopWatcher]
        /// The wake-up `eventfd`, watched by one of ``events``.
        var wakeupDescriptor: Int32
    }

    /// Fails (nil) once the loop's deinit has begun.
    let loop: UnownedReference<EventLoop>
    /// The loop's backend, which the loop owns: used only while ``loop`` is held.
    private unowned(unsafe) let backend: LibeventBackend
    /// Set by the loop's deinit, taken by the host's thread.
    private let orphans = LockedValue<Orphans?>(nil)

    init(loop: EventLoop, backend: LibeventBackend) {
        self.loop = UnownedReference(loop)
        self.backend = backend
    }

    deinit {
        loop.release()
    }

    /// The context pointer for `event_new`: carries one retain, which whoever frees the events
    /// gives back with ``releaseContext()``.
    func retainedContext() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Gives back the retain of ``retainedContext()``, once the events that carry it are freed.
    func releaseContext() {
        Unmanaged.passUnretained(self).release()
    }

    /// The wake-up event fired, on the host's thread.
    static func wakeupFired(_ context: UnsafeMutableRawPointer?) {
        let events = Unmanaged<BorrowedLoopEvents>.fromOpaque(context!).takeUnretainedValue()
        // The try-retain keeps the loop alive for the call, or fails if its deinit has begun.
        guard let loop = events.loop.load() else { return events.freeOrphans() }
        withExtendedLifetime(loop) { events.backend.wakeupFired() }
    }

    /// The timer event fired, on the host's thread.
    static func timerFired(_ context: UnsafeMutableRawPointer?) {
        let events = Unmanaged<BorrowedLoopEvents>.fromOpaque(context!).takeUnretainedValue()
        guard let loop = events.loop.load() else { return events.freeOrphans() }
        withExtendedLifetime(loop) { events.backend.timerFired() }
    }

    /// Hands `orphans` over, from the loop's deinit on any thread, and wakes the host's thread,
    /// which frees them in the wake-up event's callback.
    func adopt(_ orphans: Orphans) {
        self.orphans.withLock { handedOver in
            handedOver = orphans
            // Written under the lock that `freeOrphans` takes: the host cannot close the
            // descriptor before this write is done (after it, the number may be another file's).
            // A callback that found nothing to free left the counter unread, so the host calls
            // back again anyway.
            _ = eventfd_write(orphans.wakeupDescriptor, 1)
        }
    }

    /// Frees what the loop left, on the host's thread, inside one of the events' callbacks
    /// (libevent allows freeing an event inside its own callback). Nothing yet: the deinit is
    /// still handing over, and wakes the host when it has.
    private func freeOrphans() {
        guard let orphans = orphans.withLock({ orphans in orphans.take() }) else { return }
        for event in orphans.events { event_free(event) }
        close(orphans.wakeupDescriptor)
        // The events that carried this object are freed. (The watchers go when `orphans` does,
        // their events freed too.) The caller's reference keeps `self` for the rest of the call.
        releaseContext()
    }
}
