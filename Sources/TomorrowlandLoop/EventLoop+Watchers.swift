import CLibevent
import Tomorrowland
internal import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

extension EventLoop {
    /// Calls `handler` on the loop's thread each time `fd` becomes ready for `events`, until the
    /// returned watcher is cancelled or the loop shuts down.
    ///
    /// Level-triggered: while the descriptor stays ready, the handler is called on every tick.
    ///
    /// Safe from any thread. On the loop's thread, or while no thread drives the loop, the watcher
    /// is registered before this returns, on the calling thread. While another thread drives the
    /// loop, the registration is handed to the loop and this call waits for it (one hop; never
    /// call it from a thread the loop's own work waits on). The one-shot promise forms
    /// (``readable(_:)``, ``writable(_:)``) never wait.
    ///
    /// - Important: For a borrowed base that a host is running, call this on the host's loop
    ///   thread (inside the loop's work): while the host is inside `event_base_loop` and none of
    ///   this loop's work runs, no thread drives the loop, and the registration would touch the
    ///   base from the calling thread. Cancel the watcher before closing `fd`: libevent keeps
    ///   per-descriptor state that a reused descriptor number would confuse.
    /// - Parameters:
    ///   - fd: An open descriptor that `epoll` accepts (a socket, pipe, `eventfd`, terminal...).
    ///   - events: What to wait for; must not be empty.
    ///   - handler: Called on the loop's thread with the readiness that occurred.
    /// - Returns: The watcher; the loop keeps it alive until it is cancelled.
    /// - Throws: ``EventLoopError/invalidDescriptor(fd:errno:)`` if `fd` is closed or cannot be
    ///   watched, ``EventLoopError/shutDown`` after shutdown.
    @discardableResult
    @preconcurrency
    public func watch(
        fileDescriptor fd: Int32, for events: IOEvents, _ handler: @escaping @Sendable (IOEvents) -> Void
    ) throws -> EventLoopWatcher {
        precondition(!events.isEmpty, "EventLoop.watch(fileDescriptor:for:_:) needs .readable, .writable or both")
        // Named in stall reports by the user's handler, not by the closure around it.
        let entryPoint = ClosureLayout.entryPoint(of: ClosureLayout.EventsHolder(body: handler))
        return try withConfinedState(
            "EventLoop.watch(fileDescriptor:for:_:)", ifShutDown: .failure(EventLoopError.shutDown)
        ) { [self] in
            Result {
                try addDescriptorWatcher(fd, events: events, isOneShot: false, handlerEntryPoint: entryPoint) { flags in
                    handler(IOEvents(libeventFlags: flags))
                }
            }
        }.get()
    }

    /// Calls `handler` on the loop's thread each time the process receives `signal`, until the
    /// returned watcher is cancelled or the loop shuts down.
    ///
    /// libevent installs its own handler for `signal` and forwards deliveries to the loop, so the
    /// handler is ordinary loop work (it may allocate, lock, resolve promises). Several deliveries
    /// between two ticks may be reported once. When the last watcher of a signal goes, the previous
    /// disposition is restored.
    ///
    /// - Important: libevent delivers signals to one `event_base` per process: the first loop that
    ///   watches a signal owns signal delivery until it shuts down; the others get
    ///   ``EventLoopError/signalsOwnedByAnotherLoop``. Safe from any thread, with the same rules
    ///   as ``watch(fileDescriptor:for:_:)``.
    /// - Parameters:
    ///   - signal: The signal number (`SIGINT`, `SIGTERM`, `SIGHUP`...). `SIGKILL` and `SIGSTOP`
    ///     cannot be watched.
    ///   - handler: Called on the loop's thread with the signal number.
    /// - Returns: The watcher; the loop keeps it alive until it is cancelled.
    /// - Throws: ``EventLoopError/invalidSignal(_:)``, ``EventLoopError/signalsOwnedByAnotherLoop``,
    ///   ``EventLoopError/shutDown``.
    @discardableResult
    @preconcurrency
    public func watch(signal: Int32, _ handler: @escaping @Sendable (Int32) -> Void) throws -> EventLoopWatcher {
        let entryPoint = ClosureLayout.entryPoint(of: ClosureLayout.SignalHolder(body: handler))
        return try withConfinedState("EventLoop.watch(signal:_:)", ifShutDown: .failure(EventLoopError.shutDown)) {
            [self] in
            Result {
                try addSignalWatcher(signal, isOneShot: false, handlerEntryPoint: entryPoint) { _ in handler(signal) }
            }
        }.get()
    }

    // MARK: Internals

    /// Registers a descriptor watcher; on the loop's thread.
    func addDescriptorWatcher(
        _ fd: Int32, events: IOEvents, isOneShot: Bool, handlerEntryPoint: UInt = 0,
        handler: @escaping (Int16) -> Void
    ) throws -> EventLoopWatcher {
        guard !isShuttingDown else { throw EventLoopError.shutDown }
        let watcher = EventLoopWatcher(
            loop: self, isOneShot: isOneShot, handlerEntryPoint: handlerEntryPoint, handler: handler)
        watcher.registration = try backend.dynamic.addDescriptorWatch(
            watcher, fd: fd, events: events, isOneShot: isOneShot)
        watchers[ObjectIdentifier(watcher)] = watcher
        return watcher
    }

    /// Registers a signal watcher; on the loop's thread.
    func addSignalWatcher(
        _ signal: Int32, isOneShot: Bool, handlerEntryPoint: UInt = 0, handler: @escaping (Int16) -> Void
    ) throws
        -> EventLoopWatcher
    {
        guard !isShuttingDown else { throw EventLoopError.shutDown }
        guard signal > 0, signal < 65, signal != SIGKILL, signal != SIGSTOP else {
            throw EventLoopError.invalidSignal(signal)
        }
        let watcher = EventLoopWatcher(
            loop: self, isOneShot: isOneShot, handlerEntryPoint: handlerEntryPoint, handler: handler)
        watcher.registration = try backend.dynamic.addSignalWatch(
            watcher, signal: signal, isOneShot: isOneShot, on: self)
        watchers[ObjectIdentifier(watcher)] = watcher
        return watcher
    }

    /// Ends a watcher's registration and drops it from the registry; on the loop's thread.
    func removeWatcher(_ watcher: EventLoopWatcher) {
        watcher.markCancelled()
        watcher.removeRegistration()
        watcher.handler = nil
        watcher.onShutdown = nil
        watchers[ObjectIdentifier(watcher)] = nil
    }

    /// Step 1 of shutdown: removes every watcher, telling promise forms the loop shut down.
    func cancelAllWatchers() {
        let live = watchers.values
        for watcher in live {
            let onShutdown = watcher.onShutdown
            removeWatcher(watcher)
            onShutdown?()
        }
        watchers.removeAll()
    }
}
