import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// One connection attempt of ``TCPConnection/connect(host:port:on:timeout:options:)``: resolves
/// the host off the loop (IP literals need no resolving), then tries the addresses in order with
/// non-blocking `connect`, all under one deadline on the loop's timers.
///
/// Loop-confined after ``start(timeout:nameResolver:)``; the loop's resource registry keeps it
/// alive while its write event (whose callback argument is `self`, unretained) exists, and while
/// it waits for a name: a shutdown then finds it and ends it.
final class TCPConnector: @unchecked Sendable {
    // `@unchecked Sendable`: created on any thread, then touched only on the loop's thread (the
    // timer's work, the resolver's answer and the cancel request hop there).
    // LoopInvariants: "Loop confinement".

    let loop: EventLoop
    let host: String
    let port: UInt16
    let options: TCPConnectionOptions
    let resolver: Promise<TCPConnection, TCPError>.Resolver

    /// The name lookup in flight, abandoned when the attempt ends first.
    private var resolution: NameResolution?
    private var addresses: [TCPSocketAddress] = []
    private var nextAddress = 0
    /// The socket being connected, -1 between attempts; owned until handed to the connection.
    private var fd: Int32 = -1
    /// The attempt in progress on a simulated network (a simulated host's loop only).
    private var attempt: (any TCPConnectAttempt)?
    /// One-shot `EV_WRITE` on ``fd``: the connection completed or failed.
    private var event: OpaquePointer?
    private var timer: EventLoopScheduledWork?
    private var isFinished = false
    private var lastError: TCPError

    init(
        host: String, port: UInt16, loop: EventLoop, options: TCPConnectionOptions,
        resolver: Promise<TCPConnection, TCPError>.Resolver
    ) {
        self.host = host
        self.port = port
        self.loop = loop
        self.options = options
        self.resolver = resolver
        lastError = .addressResolutionFailed(host: host)
    }

    /// Arms the deadline, then connects to an IP literal at once or asks `nameResolver` for the
    /// addresses of a name; on the loop's thread.
    ///
    /// The deadline is armed first, so `timeout` covers resolution plus connection.
    func start(timeout: Duration, nameResolver: any NameResolver) {
        // A simulated loop whose simulation is gone has no network to connect through.
        guard !loop.isShuttingDown, !loop.isSimulated || loop.simulation != nil else {
            resolver.reject(with: .closed)
            return
        }
        loop.register(resource: self)
        timer = loop.scheduleTimer(after: timeout) { [self] in finish(.failure(.timedOut)) }
        resolver.onRequestCancel(on: .immediate) { [self] _ in
            if loop.inEventLoop {
                finish(nil)
            } else {
                _ = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in finish(nil) }
            }
        }
        // A cancel requested before `start` ran has finished the attempt inside `onRequestCancel`.
        guard !isFinished else { return }
        if let literal = TCPSocketAddress.literal(host: host, port: port) {
            addresses = literal
            tryNextAddress()
            return
        }
        // The handler holds the connector until the answer or `abandon()` (in `finish`), whichever
        // comes first; after shutdown `submitOnLoop` drops the answer without running it.
        let resolution = NameResolution(host: host, port: port) { [self] answer in
            _ = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in resolved(answer) }
        }
        self.resolution = resolution
        // A simulated host resolves through its simulation unless the caller chose a resolver.
        if loop.isSimulated, nameResolver is SystemNameResolver {
            if let simulation = loop.simulation {
                simulation.nameResolver.resolve(resolution)
            } else {
                resolution.complete(with: .failure(.closed))
            }
        } else {
            nameResolver.resolve(resolution)
        }
    }

    /// The resolver answered; on the loop's thread.
    private func resolved(_ answer: Result<[TCPSocketAddress], TCPError>) {
        resolution = nil
        guard !isFinished else { return }
        switch answer {
        case .success(let resolved) where !resolved.isEmpty:
            addresses = resolved
            tryNextAddress()
        case .success:
            finish(.failure(.addressResolutionFailed(host: host)))
        case .failure(let error):
            finish(.failure(error))
        }
    }

    /// Starts a non-blocking connect to the next address, or fails with the last error.
    private func tryNextAddress() {
        while !isFinished && nextAddress < addresses.count {
            let address = addresses[nextAddress]
            nextAddress += 1
            if loop.isSimulated {
                guard let simulation = loop.simulation else {
                    lastError = .closed
                    break
                }
                attempt = simulation.connect(to: address, from: loop, options: options) { [self] outcome in
                    attempt = nil
                    switch outcome {
                    case .success(let transport):
                        guard !isFinished else {
                            transport.close()
                            return
                        }
                        finish(.success(TCPConnection(transport: transport, loop: loop, options: options)))
                    case .failure(let error):
                        lastError = error
                        tryNextAddress()
                    }
                }
                return
            }
            let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            fd = socket(address.family, socketType, 0)
            guard fd >= 0 else {
                lastError = .connectFailed(errno: errno)
                continue
            }
            let status = address.withSockAddr { connect(fd, $0, $1) }
            if status == 0 {
                succeed()
                return
            }
            let code = errno
            if code == EINPROGRESS {
                // LoopInvariants: "Unretained callback arguments": registered in `start`,
                // unregistered in `finish` after the event is freed.
                event = event_new(
                    loop.base, fd, Int16(EV_WRITE),
                    { _, _, context in
                        let connector = Unmanaged<TCPConnector>.fromOpaque(context!).takeUnretainedValue()
                        connector.loop.withCallbackEntered { connector.connectCompleted() }
                    }, Unmanaged.passUnretained(self).toOpaque())
                guard let event, event_add(event, nil) == 0 else {
                    fatalError("TCPConnection.connect: event_new failed (out of memory)")
                }
                return
            }
            lastError = .connectFailed(errno: code)
            closeDescriptor(fd)
            fd = -1
        }
        finish(.failure(lastError))
    }

    /// The socket became writable: the connect finished, one way or the other.
    private func connectCompleted() {
        if let event { event_free(event) }
        event = nil
        guard !isFinished else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        if code == 0 {
            succeed()
            return
        }
        lastError = .connectFailed(errno: code)
        closeDescriptor(fd)
        fd = -1
        tryNextAddress()
    }

    private func succeed() {
        let connection = TCPConnection(fd: fd, loop: loop, options: options, remote: nil)
        fd = -1
        finish(.success(connection))
    }

    /// Ends the attempt: abandons a name lookup in flight, cancels the timer, frees the event,
    /// closes an unused socket, unregisters, then resolves (`nil`: cancelled).
    private func finish(_ outcome: Result<TCPConnection, TCPError>?) {
        guard !isFinished else { return }
        isFinished = true
        resolution?.abandon()
        resolution = nil
        attempt?.cancel()
        attempt = nil
        timer?.cancel()
        timer = nil
        if let event { event_free(event) }
        event = nil
        if fd >= 0 { closeDescriptor(fd) }
        fd = -1
        withExtendedLifetime(self) {
            loop.unregister(resource: self)
            switch outcome {
            case .success(let connection): resolver.fulfill(with: connection)
            case .failure(let error): resolver.reject(with: error)
            case nil: resolver.cancel()
            }
        }
    }
}

extension TCPConnector: EventLoopResource {
    func closeForShutdown() {
        finish(.failure(.closed))
    }
}

extension TCPConnection {
    /// Connects to `host`:`port` and resolves with the connection, on the loop's thread.
    ///
    /// An IP literal is connected to at once. A name is resolved off the loop, by the system's
    /// resolver (`getaddrinfo`) on a few threads of the library's own, so a slow or silent DNS
    /// server never stalls the loop's other connections and timers. The addresses are then tried
    /// in order (for "localhost": `::1`, then `127.0.0.1`) until one connects.
    ///
    /// `timeout` is armed on the loop's timers before resolution starts: it covers resolution plus
    /// connection. Cancelling the promise (`requestCancel()`), the timeout, or a loop
    /// shutdown abandons the attempt: its socket is closed, and a name lookup still in flight is
    /// abandoned (`getaddrinfo` cannot be interrupted: its late answer is freed and discarded on
    /// the resolver's thread, without touching the loop). See <doc:ConnectingOverTCP>.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal (with or without brackets), or a host name.
    ///   - port: The port.
    ///   - loop: The loop that runs the connection.
    ///   - timeout: The limit for the whole attempt, resolution included.
    ///   - options: Options of the connection.
    /// - Returns: A promise resolved on the loop's thread (whichever thread drives the loop at
    ///   that moment): fulfilled with the connection; rejected with
    ///   ``TCPError/addressResolutionFailed(host:)``, ``TCPError/connectFailed(errno:)`` (the last
    ///   address's error), ``TCPError/timedOut``, or ``TCPError/closed`` when the loop is shut
    ///   down first (before or during the attempt); cancelled after a cancel request. Safe from
    ///   any thread.
    public static func connect(
        host: String, port: UInt16, on loop: EventLoop,
        timeout: Duration, options: TCPConnectionOptions = .init()
    ) -> Promise<TCPConnection, TCPError> {
        connect(
            host: host, port: port, on: loop, timeout: timeout, options: options,
            nameResolver: SystemNameResolver.shared)
    }

    /// ``connect(host:port:on:timeout:options:)`` with the name resolver to use instead of the
    /// system's: a cache, another DNS client, or a test double that answers late or never.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal (with or without brackets; literals never reach
    ///     `nameResolver`), or a host name.
    ///   - port: The port.
    ///   - loop: The loop that runs the connection.
    ///   - timeout: The limit for the whole attempt, resolution included.
    ///   - options: Options of the connection.
    ///   - nameResolver: Asked, on the loop's thread, to resolve a host name; see ``NameResolver``.
    /// - Returns: The promise ``connect(host:port:on:timeout:options:)`` returns.
    public static func connect(
        host: String, port: UInt16, on loop: EventLoop,
        timeout: Duration, options: TCPConnectionOptions = .init(), nameResolver: any NameResolver
    ) -> Promise<TCPConnection, TCPError> {
        let (promise, resolver) = Promise<TCPConnection, TCPError>.makeWithResolver()
        let connector = TCPConnector(host: host, port: port, loop: loop, options: options, resolver: resolver)
        let accepted = loop.submitOnLoop(runsInlineWhenPossible: true) {
            connector.start(timeout: timeout, nameResolver: nameResolver)
        }
        if !accepted { resolver.reject(with: .closed) }
        return promise
    }
}
