import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A listening socket under libevent's `evconnlistener`: the acceptor of a ``TCPListener`` on a
/// loop with an `event_base`.
final class TCPSocketAcceptor: TCPAcceptor {
    /// Owns the socket (`LEV_OPT_CLOSE_ON_FREE`); nil once closed.
    private var listener: OpaquePointer?
    private let options: TCPConnectionOptions
    private let base: OpaquePointer

    /// Takes over listening socket `fd` (closed on failure); throws if libevent cannot.
    init(listeningSocket fd: Int32, base: OpaquePointer, options: TCPConnectionOptions) throws(TCPError) {
        self.base = base
        self.options = options
        // Backlog 0: the socket already listens. The listener owns the socket from here
        // (LEV_OPT_CLOSE_ON_FREE) and creates accepted sockets non-blocking and close-on-exec.
        // Disabled until attached: the callback's argument is set then.
        let flags = UInt32(LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_DISABLED)
        guard let listener = evconnlistener_new(base, nil, nil, flags, 0, fd) else {
            closeDescriptor(fd)
            throw .system(errno: ENOMEM)
        }
        self.listener = listener
    }

    func attach(to owner: TCPListener) {
        guard let listener else { return }
        // Context: the listener, unretained; the loop's resource registry keeps it alive until
        // `close()` frees the evconnlistener.
        // LoopInvariants: "Unretained callback arguments".
        evconnlistener_set_cb(
            listener,
            { _, fd, address, length, context in
                let listener = Unmanaged<TCPListener>.fromOpaque(context!).takeUnretainedValue()
                listener.acceptedSocket(fd, address: address, length: length)
            }, Unmanaged.passUnretained(owner).toOpaque())
        evconnlistener_set_error_cb(listener) { _, context in
            let code = errno
            let listener = Unmanaged<TCPListener>.fromOpaque(context!).takeUnretainedValue()
            listener.loop.withCallbackEntered { listener.acceptorFailed(errno: code) }
        }
        evconnlistener_enable(listener)
    }

    func setAccepting(_ enabled: Bool) {
        guard let listener else { return }
        if enabled {
            evconnlistener_enable(listener)
        } else {
            evconnlistener_disable(listener)
        }
    }

    func close() {
        guard let listener else { return }
        // Frees the event and closes the socket; safe inside the accept callback (libevent holds
        // a reference to the listener for the callback's length).
        evconnlistener_free(listener)
        self.listener = nil
    }

    /// Wraps an accepted socket in its transport.
    func transport(for fd: Int32, address: UnsafeMutablePointer<sockaddr>?, length: Int32) -> TCPSocketTransport {
        let remote = address.map { TCPSocketAddress($0, length: socklen_t(length)) }
        return TCPSocketTransport(fd: fd, base: base, options: options, remote: remote)
    }
}

extension TCPListener {
    /// libevent accepted `fd`: hands it to the listener as a socket transport, or closes it if
    /// the listener is closing.
    fileprivate func acceptedSocket(_ fd: Int32, address: UnsafeMutablePointer<sockaddr>?, length: Int32) {
        loop.withCallbackEntered {
            guard let acceptor = acceptor as? TCPSocketAcceptor, !isClosed else {
                closeDescriptor(fd)
                return
            }
            acceptorAccepted(acceptor.transport(for: fd, address: address, length: length))
        }
    }
}
