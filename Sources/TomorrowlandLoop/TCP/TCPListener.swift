import CLibevent
import Synchronization
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP socket on an ``EventLoop``: accepts connections on the loop's thread and hands
/// each to a callback.
///
/// Start one with ``bind(host:port:on:options:onAccept:)`` from any thread (it returns a promise),
/// or with ``listen(host:port:on:options:onAccept:)`` on the loop's thread or before any thread
/// drives the loop. Stop it with ``close()`` (the connections it accepted stay open) or
/// ``shutdownGracefully(within:)`` (they finish sending what they queued, then close).
///
/// Accepting uses libevent's `evconnlistener`. When `accept` fails for lack of resources
/// (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) the listener stops accepting for
/// ``resourceBackoff`` and then resumes, instead of spinning on a socket that stays readable.
///
/// The loop keeps an open listener alive; it closes every listener when it shuts down.
public final class TCPListener: @unchecked Sendable {
    // `@unchecked Sendable`: `loop`, `localPort` and `options` are immutable; `isClosedFlag` and
    // `isPauseRequested` are atomic; everything else is loop-confined.
    // LoopInvariants: "Loop confinement".

    /// How long accepting pauses after `accept` ran out of descriptors or memory.
    public static let resourceBackoff: Duration = .milliseconds(100)

    /// The loop whose thread accepts and runs the `onAccept` handler given to ``listen(host:port:on:options:onAccept:)``.
    public let loop: EventLoop
    /// The port the socket is bound to (the kernel's choice when listening on port 0).
    public let localPort: UInt16
    /// The options of the socket and of accepted connections.
    public let options: TCPListenerOptions

    /// The listener; its callback argument is `self`, unretained, kept valid by the loop's
    /// resource registry until `evconnlistener_free` (which also closes the socket).
    /// What produces connections: a listening socket, or a simulated host's port (see
    /// ``TCPAcceptor``); nil once closed.
    private(set) var acceptor: (any TCPAcceptor)?
    private var onAccept: ((TCPConnection) -> Void)?
    /// What the last ``pauseAccepting()`` or ``resumeAccepting()`` asked for, on any thread; the
    /// loop applies the latest value, so calls that hop from other threads cannot be applied in
    /// the wrong order.
    let isPauseRequested = Atomic<Bool>(false)
    /// ``pauseAccepting()`` is in force on the loop.
    private var isPausedByUser = false
    /// Accepting is paused after a resource error, until the backoff timer fires.
    private var isBackingOff = false
    /// Set by the first ``close()`` or ``shutdownGracefully(within:)``, on the calling thread
    /// before the hop to the loop: from then on no connection is accepted.
    let isClosedFlag = Atomic<Bool>(false)
    /// How many times `accept` failed for lack of descriptors or memory (each pauses accepting
    /// for ``resourceBackoff``); loop-confined, for tests and diagnostics.
    private(set) var resourceFailures = 0
    /// The connections this listener accepted that are not closed yet, for
    /// ``shutdownGracefully(within:)``. Each leaves when its ``TCPConnection/closed`` resolves;
    /// the connection does not refer back to the listener (its `closed` callback holds it weakly),
    /// so there is no cycle. Loop-confined.
    var openConnections: [ObjectIdentifier: TCPConnection] = [:]
    /// When each of ``openConnections`` was accepted: graceful shutdown closes them in that
    /// order, not the dictionary's (which depends on addresses and the process's hash seed), so
    /// that a simulated run replays the same from its seed.
    var acceptOrder: [ObjectIdentifier: UInt64] = [:]
    var acceptCount: UInt64 = 0
    /// The graceful shutdown in progress, if any. Loop-confined.
    var drain: GracefulDrain?

    private init(
        acceptor: any TCPAcceptor, loop: EventLoop, localPort: UInt16, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) {
        self.acceptor = acceptor
        self.loop = loop
        self.localPort = localPort
        self.options = options
        self.onAccept = onAccept
    }

    /// Makes a listener on `acceptor` and registers it with `loop`; on the loop's thread.
    package static func make(
        acceptor: any TCPAcceptor, loop: EventLoop, localPort: UInt16, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> TCPListener {
        let object = TCPListener(
            acceptor: acceptor, loop: loop, localPort: localPort, options: options, onAccept: onAccept)
        acceptor.attach(to: object)
        loop.register(resource: object)
        return object
    }

    /// Listens on `host`:`port` now and, on the loop's thread, hands each accepted connection to
    /// `onAccept`; the synchronous form of ``bind(host:port:on:options:onAccept:)``, for set-up on
    /// the loop's thread.
    ///
    /// The connection starts idle: call ``TCPConnection/startReading(_:)`` or a promise read in
    /// `onAccept`.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal ("127.0.0.1", "::1", "0.0.0.0", "::"), "localhost" (the
    ///     first address it resolves to that binds), or "" / "*" for every address.
    ///   - port: The port, 0 for one the kernel picks (read it from ``localPort``).
    ///   - loop: The loop that accepts and runs `onAccept`.
    ///   - options: Socket options; ``TCPListenerOptions/connection`` applies to accepted
    ///     connections.
    ///   - onAccept: Called on the loop's thread with each new connection.
    /// - Returns: The listener, accepting.
    /// - Throws: ``TCPError/addressResolutionFailed(host:)``, ``TCPError/bindFailed(errno:)``;
    ///   ``TCPError/closed`` when the loop has shut down.
    /// Safe from any thread. On the loop's thread, or while no thread drives the loop, it binds on
    /// the calling thread. While another thread drives the loop (an ``EventLoopGroup``'s loop),
    /// it hands the bind to the loop and waits for it (never call it from a thread the loop's own
    /// work waits on); ``bind(host:port:on:options:onAccept:)`` does the same without waiting.
    ///
    /// - Important: For a borrowed base that a host is running, call it on the host's loop thread
    ///   (inside the loop's work), as for ``EventLoop/watch(fileDescriptor:for:_:)``.
    public static func listen(
        host: String, port: UInt16, on loop: EventLoop,
        options: TCPListenerOptions = .init(),
        onAccept: @escaping (TCPConnection) -> Void
    ) throws(TCPError) -> TCPListener {
        let target = try loop.backend.dynamic.listenTarget(host: host, port: port)
        // At once on the loop's thread; on this thread when it can hold the idle loop (a borrowed
        // base too, as for watchers: the host must not run its base meanwhile, as documented
        // there); else on the loop's thread through the inbox, this thread waiting.
        return try loop.withConfinedState(
            "TCPListener.listen(host:port:on:options:onAccept:)", ifShutDown: .failure(.closed)
        ) {
            loop.backend.dynamic.bindListener(target, on: loop, options: options, onAccept: onAccept)
        }.get()
    }

    /// Whether ``close()`` or ``shutdownGracefully(within:)`` was called, or the loop closed the
    /// listener. Any thread.
    public var isClosed: Bool {
        isClosedFlag.load(ordering: .acquiring)
    }

    /// Stops accepting and closes the socket. Connections already accepted stay open (see
    /// ``shutdownGracefully(within:)`` to close them too).
    ///
    /// No connection is accepted once this returns. Idempotent; safe from any thread (the socket
    /// closes at once on the loop's thread, or when no thread drives the loop; otherwise soon, on
    /// the loop's thread). After the loop shut down it does nothing, the loop having closed the
    /// listener.
    public func close() {
        guard !isClosedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in closeOnLoop() }
    }

    /// Stops accepting until ``resumeAccepting()`` (at a connection limit, for instance); pending
    /// connections wait in the kernel's backlog.
    ///
    /// Safe from any thread: on the loop's thread (or while no thread drives the loop) it takes
    /// effect at once, otherwise when the loop next runs its work. Of several calls from different
    /// threads, the last one wins.
    public func pauseAccepting() {
        isPauseRequested.store(true, ordering: .releasing)
        loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in applyPauseRequest() }
    }

    /// Accepts again after ``pauseAccepting()``. Safe from any thread, like ``pauseAccepting()``.
    public func resumeAccepting() {
        isPauseRequested.store(false, ordering: .releasing)
        loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in applyPauseRequest() }
    }

    // MARK: Internals

    /// Brings the libevent listener in line with the latest pause request; on the loop's thread.
    private func applyPauseRequest() {
        isPausedByUser = isPauseRequested.load(ordering: .acquiring)
        guard let acceptor else { return }
        if isPausedByUser {
            acceptor.setAccepting(false)
        } else if !isBackingOff {
            acceptor.setAccepting(true)
        }
    }

    /// Stops accepting and closes the socket; on the loop's thread. The accepted connections stay
    /// tracked (for a later ``shutdownGracefully(within:)``).
    func closeOnLoop() {
        isClosedFlag.store(true, ordering: .releasing)
        guard let acceptor else { return }
        acceptor.close()
        self.acceptor = nil
        onAccept = nil
        withExtendedLifetime(self) { loop.unregister(resource: self) }
    }

    /// The acceptor took a connection from the backlog: wraps it and hands it to the accept
    /// handler; a callback of the loop (on its thread, as the driver).
    package func acceptorAccepted(_ transport: any TCPTransport) {
        // `close()` from another thread sets the flag before its hop reaches the loop.
        guard acceptor != nil, !isClosed, let onAccept else {
            transport.close()
            return
        }
        let connection = TCPConnection(transport: transport, loop: loop, options: options.connection)
        track(connection)
        onAccept(connection)
    }

    /// The acceptor could not take a connection (`errno` as `accept` reported it); a callback of
    /// the loop. Running out of descriptors or memory pauses accepting for
    /// ``resourceBackoff``; other failures concern one connection and are ignored.
    package func acceptorFailed(errno code: Int32) {
        guard let acceptor else { return }
        switch code {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            resourceFailures += 1
            // The pending connection stays in the backlog and the socket stays readable: without
            // a pause, level-triggered readiness would spin the loop.
            acceptor.setAccepting(false)
            guard !isBackingOff else { return }
            isBackingOff = true
            _ = loop.scheduleTimer(after: Self.resourceBackoff) { [self] in
                isBackingOff = false
                if let acceptor = self.acceptor, !isPausedByUser { acceptor.setAccepting(true) }
            }
        default:
            // Transient per-connection failures (the peer reset before accept...): keep going.
            break
        }
    }
}

extension TCPListener: EventLoopResource {
    func closeForShutdown() {
        closeOnLoop()
    }
}
