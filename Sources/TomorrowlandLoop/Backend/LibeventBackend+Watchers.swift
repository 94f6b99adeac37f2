import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

extension LibeventBackend {
    func addDescriptorWatch(
        _ watcher: EventLoopWatcher, fd: Int32, events: IOEvents, isOneShot: Bool
    )
        throws(EventLoopError) -> any LoopWatchRegistration
    {
        // libevent would accept a closed descriptor here and fail later, or not at all.
        guard fcntl(fd, F_GETFD) != -1 else { throw .invalidDescriptor(fd: fd, errno: errno) }
        let flags = events.libeventFlags | (isOneShot ? 0 : Int16(EV_PERSIST))
        return try register(watcher, fd: fd, flags: flags) { .invalidDescriptor(fd: fd, errno: errno) }
    }

    /// libevent delivers signals to one `event_base` per process: `loop` claims
    /// ``SignalOwnership`` first.
    func addSignalWatch(
        _ watcher: EventLoopWatcher, signal: Int32, isOneShot: Bool, on loop: EventLoop
    )
        throws(EventLoopError) -> any LoopWatchRegistration
    {
        try SignalOwnership.claim(for: loop)
        let flags = Int16(EV_SIGNAL) | (isOneShot ? 0 : Int16(EV_PERSIST))
        return try register(watcher, fd: signal, flags: flags) {
            .libeventFailure(operation: "event_add(signal \(signal))")
        }
    }

    /// Creates and adds the watcher's event.
    private func register(
        _ watcher: EventLoopWatcher, fd: Int32, flags: Int16, failure: () -> EventLoopError
    ) throws(EventLoopError) -> LibeventWatch {
        // Context: the watcher, unretained; the loop's `watchers` keeps it alive until its event
        // is freed. LoopInvariants: "Unretained callback arguments": `removeWatcher(_:)` frees,
        // then drops it.
        guard
            let event = event_new(
                base, fd, flags,
                { _, flags, context in
                    Unmanaged<EventLoopWatcher>.fromOpaque(context!).takeUnretainedValue().fire(flags)
                }, Unmanaged.passUnretained(watcher).toOpaque())
        else { throw .libeventFailure(operation: "event_new") }
        guard event_add(event, nil) == 0 else {
            let error = failure()
            event_free(event)
            throw error
        }
        return LibeventWatch(event: event)
    }
}

/// A watcher's libevent event.
final class LibeventWatch: LoopWatchRegistration {
    /// Freed by ``remove()``, or handed to a borrowed base's host with the loop's other events.
    let event: OpaquePointer

    init(event: OpaquePointer) {
        self.event = event
    }

    func remove() {
        event_free(event)
    }
}

/// Which loop receives signals: libevent's signal machinery is process-global (one `event_base`
/// at a time), so the first loop to watch a signal owns delivery until it shuts down.
enum SignalOwnership {
    private static let owner = LockedValue<ObjectIdentifier?>(nil)

    /// Makes `loop` the owner, or throws if another loop is.
    static func claim(for loop: EventLoop) throws(EventLoopError) {
        let id = ObjectIdentifier(loop)
        let granted = owner.withLock { owner -> Bool in
            if owner == nil { owner = id }
            return owner == id
        }
        guard granted else { throw .signalsOwnedByAnotherLoop }
    }

    /// Ends `loop`'s ownership, if it has it.
    static func release(by loop: EventLoop) {
        let id = ObjectIdentifier(loop)
        owner.withLock { owner in
            if owner == id { owner = nil }
        }
    }
}
