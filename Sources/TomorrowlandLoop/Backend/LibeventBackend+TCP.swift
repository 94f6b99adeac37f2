#if canImport(Glibc)
    import Glibc
#endif

/// TCP on real sockets: listeners under `evconnlistener`, connects with a write event, names
/// through the resolver the caller chose.
extension LibeventBackend {
    /// Resolves `host` (a literal, "localhost", "" or "*") on the calling thread.
    func listenTarget(host: String, port: UInt16) throws(TCPError) -> TCPListenTarget {
        TCPListenTarget(
            host: host, port: port, addresses: try TCPSocketAddress.resolve(host: host, port: port, passive: true))
    }

    /// Binds the first of the target's addresses that binds. Fails with ``TCPError/closed`` once
    /// the loop is shutting down (its resources are closed, or being closed, and a new one would
    /// outlive the base).
    func bindListener(
        _ target: TCPListenTarget, on loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> Result<TCPListener, TCPError> {
        guard !loop.isShuttingDown else { return .failure(.closed) }
        var lastError = TCPError.addressResolutionFailed(host: target.host)
        for address in target.addresses {
            do throws(TCPError) {
                return .success(try makeListener(address: address, loop: loop, options: options, onAccept: onAccept))
            } catch {
                lastError = error
            }
        }
        return .failure(lastError)
    }

    /// Creates, binds and listens on a socket for `address`, and wraps it in an `evconnlistener`.
    private func makeListener(
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
        let bound = address.withSockAddr { Glibc.bind(fd, $0, $1) }
        guard bound == 0, Glibc.listen(fd, options.backlog) == 0 else {
            let code = errno
            closeDescriptor(fd)
            throw .bindFailed(errno: code)
        }
        let port = TCPSocketAddress.local(of: fd)?.port ?? address.port
        let acceptor = try TCPSocketAcceptor(listeningSocket: fd, base: base, options: options.connection)
        return TCPListener.make(acceptor: acceptor, loop: loop, localPort: port, options: options, onAccept: onAccept)
    }

    var connectRefusal: TCPError? { nil }

    func nameResolver(replacing requested: any NameResolver) -> any NameResolver {
        requested
    }

    func connect(
        to address: TCPSocketAddress, from loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) -> any TCPConnectAttempt {
        let attempt = TCPSocketConnectAttempt(loop: loop, base: base, options: options, completion: completion)
        attempt.start(to: address)
        return attempt
    }
}
