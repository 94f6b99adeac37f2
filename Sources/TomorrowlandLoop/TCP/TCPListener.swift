import CLibevent
import Synchronization
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP socket on an ``EventLoop``: accepts connections on the loop's thread and hands
/// each to a callback.
///
/// Accepting uses libevent's `evconnlistener`. When `accept` fails for lack of resources
/// (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) the listener stops accepting for
/// ``resourceBackoff`` and then resumes, instead of spinning on a socket that stays readable.
///
/// The loop keeps an open listener alive; it closes every listener when it shuts down.
public final class TCPListener: @unchecked Sendable {
    // `@unchecked Sendable`: `loop`, `localPort` and `options` are immutable; `isClosedFlag` is
    // atomic; everything else is loop-confined.

    /// How long accepting pauses after `accept` ran out of descriptors or memory.
    public static let resourceBackoff: Duration = .milliseconds(100)

    /// The loop whose thread accepts and runs ``onAccept``.
    public let loop: EventLoop
    /// The port the socket is bound to (the kernel's choice when listening on port 0).
    public let localPort: UInt16
    /// The options of the socket and of accepted connections.
    public let options: TCPListenerOptions

    /// The listener; its callback argument is `self`, unretained, kept valid by the loop's
    /// resource registry until `evconnlistener_free` (which also closes the socket).
    private var listener: OpaquePointer?
    private var onAccept: ((TCPConnection) -> Void)?
    /// ``pauseAccepting()`` is in force.
    private var isPausedByUser = false
    /// Accepting is paused after a resource error, until the backoff timer fires.
    private var isBackingOff = false
    private let isClosedFlag = Atomic<Bool>(false)
    /// How many times `accept` failed for lack of descriptors or memory (each pauses accepting
    /// for ``resourceBackoff``); loop-confined, for tests and diagnostics.
    private(set) var resourceFailures = 0

    private init(
        listener: OpaquePointer, loop: EventLoop, localPort: UInt16, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) {
        self.listener = listener
        self.loop = loop
        self.localPort = localPort
        self.options = options
        self.onAccept = onAccept
    }

    /// Listens on `host`:`port` and, on the loop's thread, hands each accepted connection to
    /// `onAccept`.
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
    /// - Throws: ``TCPError/addressResolutionFailed(host:)``, ``TCPError/bindFailed(errno:)``.
    /// - Important: Call from the loop's thread or while no thread drives the loop (before it
    ///   runs); calling it after the loop shut down is a precondition failure.
    public static func listen(
        host: String, port: UInt16, on loop: EventLoop,
        options: TCPListenerOptions = .init(),
        onAccept: @escaping (TCPConnection) -> Void
    ) throws(TCPError) -> TCPListener {
        let addresses = try TCPSocketAddress.resolve(host: host, port: port, passive: true)
        let result: Result<TCPListener, TCPError>
        do {
            result = try loop.withLoopAccess("TCPListener.listen") { () -> Result<TCPListener, TCPError> in
                precondition(
                    !loop.isShuttingDown, "TCPListener.listen on a loop that is shutting down; listen before shutdown")
                var lastError = TCPError.addressResolutionFailed(host: host)
                for address in addresses {
                    do throws(TCPError) {
                        return .success(try make(address: address, loop: loop, options: options, onAccept: onAccept))
                    } catch {
                        lastError = error
                    }
                }
                return .failure(lastError)
            }
        } catch {
            preconditionFailure("TCPListener.listen on a loop that was shut down; listen before shutdown")
        }
        return try result.get()
    }

    /// Creates, binds and listens on a socket for `address`, and wraps it in an `evconnlistener`.
    private static func make(
        address: TCPSocketAddress, loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) throws(TCPError) -> TCPListener {
        let fd = socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0)
        guard fd >= 0 else { throw .bindFailed(errno: errno) }
        if options.reuseAddress { setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1) }
        if options.reusePort && !setSocketOption(fd, SOL_SOCKET, SO_REUSEPORT, 1) {
            let code = errno
            closeDescriptor(fd)
            throw .bindFailed(errno: code)
        }
        // "::" serves IPv6 only: IPv4 clients are served by a listener on "0.0.0.0", so both can
        // coexist on one port.
        if address.family == AF_INET6 { setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        let bound = address.withSockAddr { bind(fd, $0, $1) }
        guard bound == 0, Glibc.listen(fd, options.backlog) == 0 else {
            let code = errno
            closeDescriptor(fd)
            throw .bindFailed(errno: code)
        }
        let port = TCPSocketAddress.local(of: fd)?.port ?? address.port
        // Backlog 0: the socket already listens. The listener owns the socket from here
        // (LEV_OPT_CLOSE_ON_FREE) and creates accepted sockets non-blocking and close-on-exec.
        let flags = UInt32(LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC)
        guard
            let listener = evconnlistener_new(
                loop.base,
                { _, fd, address, length, context in
                    let listener = Unmanaged<TCPListener>.fromOpaque(context!).takeUnretainedValue()
                    listener.loop.withCallbackEntered { listener.accepted(fd, address: address, length: length) }
                }, nil, flags, 0, fd)
        else {
            closeDescriptor(fd)
            throw .system(errno: ENOMEM)
        }
        let object = TCPListener(listener: listener, loop: loop, localPort: port, options: options, onAccept: onAccept)
        evconnlistener_set_cb(
            listener,
            { _, fd, address, length, context in
                let listener = Unmanaged<TCPListener>.fromOpaque(context!).takeUnretainedValue()
                listener.loop.withCallbackEntered { listener.accepted(fd, address: address, length: length) }
            }, Unmanaged.passUnretained(object).toOpaque())
        evconnlistener_set_error_cb(listener) { _, context in
            let code = errno
            let listener = Unmanaged<TCPListener>.fromOpaque(context!).takeUnretainedValue()
            listener.loop.withCallbackEntered { listener.acceptFailed(errno: code) }
        }
        loop.register(resource: object)
        return object
    }

    /// Whether ``close()`` was called (or the loop closed the listener). Any thread.
    public var isClosed: Bool {
        isClosedFlag.load(ordering: .acquiring)
    }

    /// Stops accepting and closes the socket. Connections already accepted stay open.
    ///
    /// Idempotent; safe from any thread (hops to the loop; after the loop shut down it does
    /// nothing, the loop having closed the listener).
    public func close() {
        guard !isClosedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.performOnLoop { [self] in closeOnLoop() }
    }

    /// Stops accepting until ``resumeAccepting()`` (at a connection limit, for instance); pending
    /// connections wait in the kernel's backlog. Loop thread (or while no thread drives the
    /// loop); from another thread while the loop runs it is a precondition failure.
    public func pauseAccepting() {
        loop.withConfinedAccess("TCPListener.pauseAccepting()") {
            isPausedByUser = true
            if let listener { evconnlistener_disable(listener) }
        }
    }

    /// Accepts again after ``pauseAccepting()``. Same thread rule as ``pauseAccepting()``.
    public func resumeAccepting() {
        loop.withConfinedAccess("TCPListener.resumeAccepting()") {
            isPausedByUser = false
            if let listener, !isBackingOff { evconnlistener_enable(listener) }
        }
    }

    // MARK: Internals

    private func closeOnLoop() {
        isClosedFlag.store(true, ordering: .releasing)
        guard let listener else { return }
        // Frees the event and closes the socket; safe inside the accept callback (libevent holds
        // a reference to the listener for the callback's length).
        evconnlistener_free(listener)
        self.listener = nil
        onAccept = nil
        withExtendedLifetime(self) { loop.unregister(resource: self) }
    }

    private func accepted(_ fd: Int32, address: UnsafeMutablePointer<sockaddr>?, length: Int32) {
        // `close()` from another thread sets the flag before its hop reaches the loop.
        guard listener != nil, !isClosed, let onAccept else {
            closeDescriptor(fd)
            return
        }
        let remote = address.map { TCPSocketAddress($0, length: socklen_t(length)) }
        let connection = TCPConnection(fd: fd, loop: loop, options: options.connection, remote: remote)
        onAccept(connection)
    }

    private func acceptFailed(errno code: Int32) {
        guard let listener else { return }
        switch code {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            resourceFailures += 1
            // The pending connection stays in the backlog and the socket stays readable: without
            // a pause, level-triggered readiness would spin the loop.
            evconnlistener_disable(listener)
            guard !isBackingOff else { return }
            isBackingOff = true
            _ = loop.scheduleTimer(after: Self.resourceBackoff) { [self] in
                isBackingOff = false
                if let listener = self.listener, !isPausedByUser { evconnlistener_enable(listener) }
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
