import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// One connection attempt of ``TCPConnection/connect(host:port:on:timeout:options:)``: tries the
/// resolved addresses in order with non-blocking `connect`, under one deadline on the loop's
/// timers.
///
/// Loop-confined after ``start(timeout:)``; the loop's resource registry keeps it alive while its
/// write event (whose callback argument is `self`, unretained) exists.
final class TCPConnector: @unchecked Sendable {
    // `@unchecked Sendable`: created on any thread, then touched only on the loop's thread (the
    // timer's work and the cancel request hop there).

    let loop: EventLoop
    let host: String
    let port: UInt16
    let options: TCPConnectionOptions
    let resolver: Promise<TCPConnection, TCPError>.Resolver

    private var addresses: [TCPSocketAddress] = []
    private var nextAddress = 0
    /// The socket being connected, -1 between attempts; owned until handed to the connection.
    private var fd: Int32 = -1
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

    /// Resolves the host and starts the first attempt; on the loop's thread.
    func start(timeout: Duration) {
        guard !loop.isShuttingDown else {
            resolver.reject(with: .closed)
            return
        }
        do {
            addresses = try TCPSocketAddress.resolve(host: host, port: port, passive: false)
        } catch {
            resolver.reject(with: error)
            return
        }
        loop.register(resource: self)
        timer = loop.scheduleTimer(after: timeout) { [self] in finish(.failure(.timedOut)) }
        resolver.onRequestCancel(on: .immediate) { [self] _ in
            if loop.inEventLoop {
                finish(nil)
            } else {
                _ = loop.performOnLoop { [self] in finish(nil) }
            }
        }
        tryNextAddress()
    }

    /// Starts a non-blocking connect to the next address, or fails with the last error.
    private func tryNextAddress() {
        while !isFinished && nextAddress < addresses.count {
            let address = addresses[nextAddress]
            nextAddress += 1
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

    /// Ends the attempt: cancels the timer, frees the event, closes an unused socket,
    /// unregisters, then resolves (`nil`: cancelled).
    private func finish(_ outcome: Result<TCPConnection, TCPError>?) {
        guard !isFinished else { return }
        isFinished = true
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
    /// The addresses `host` resolves to are tried in order (for "localhost": `::1`, then
    /// `127.0.0.1`) until one connects, all within `timeout`, measured on the loop's timers.
    /// Cancelling the promise abandons the attempt (the socket is closed).
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal, or "localhost" (other names go through the system
    ///     resolver, which may block the loop's thread while it asks DNS).
    ///   - port: The port.
    ///   - loop: The loop that runs the connection.
    ///   - timeout: The limit for the whole attempt.
    ///   - options: Options of the connection.
    /// - Returns: A promise rejected with ``TCPError/addressResolutionFailed(host:)``,
    ///   ``TCPError/connectFailed(errno:)`` (the last address's error), ``TCPError/timedOut``,
    ///   or ``TCPError/closed`` when the loop is shut down first. Safe from any thread.
    public static func connect(
        host: String, port: UInt16, on loop: EventLoop,
        timeout: Duration, options: TCPConnectionOptions = .init()
    ) -> Promise<TCPConnection, TCPError> {
        let (promise, resolver) = Promise<TCPConnection, TCPError>.makeWithResolver()
        let connector = TCPConnector(host: host, port: port, loop: loop, options: options, resolver: resolver)
        if !loop.performOnLoop({ connector.start(timeout: timeout) }) {
            resolver.reject(with: .closed)
        }
        return promise
    }
}
