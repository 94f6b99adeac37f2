import Tomorrowland

/// One connection attempt of ``TCPConnection/connect(host:port:on:timeout:options:)``: resolves
/// the host off the loop (IP literals need no resolving), then tries the addresses in order, each
/// through the loop's backend (a non-blocking `connect` on libevent), all under one deadline on
/// the loop's timers.
///
/// Loop-confined after ``start(timeout:nameResolver:)``; the loop's resource registry keeps it
/// alive while an attempt at one address (whose callback argument may be its own, unretained)
/// is in progress, and while it waits for a name: a shutdown then finds it and ends it.
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
    /// The attempt at one address in progress, if any.
    private var attempt: (any TCPConnectAttempt)?
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
        guard !loop.isShuttingDown else {
            resolver.reject(with: .closed)
            return
        }
        if let refusal = loop.backend.dynamic.connectRefusal {
            resolver.reject(with: refusal)
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
        loop.backend.dynamic.nameResolver(replacing: nameResolver).resolve(resolution)
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

    /// Starts connecting to the next address, or fails with the last error.
    private func tryNextAddress() {
        guard !isFinished else { return }
        guard nextAddress < addresses.count else {
            finish(.failure(lastError))
            return
        }
        let address = addresses[nextAddress]
        nextAddress += 1
        let started = loop.backend.dynamic.connect(to: address, from: loop, options: options) { [self] outcome in
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
        // An outcome known at once ran the completion inside `connect`, which went on from there.
        if started.isPending { attempt = started }
    }

    /// Ends the attempt: abandons a name lookup in flight and the attempt at an address (its
    /// socket closed), cancels the timer, unregisters, then resolves (`nil`: cancelled).
    private func finish(_ outcome: Result<TCPConnection, TCPError>?) {
        guard !isFinished else { return }
        isFinished = true
        resolution?.abandon()
        resolution = nil
        attempt?.cancel()
        attempt = nil
        timer?.cancel()
        timer = nil
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
