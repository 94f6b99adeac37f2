import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A connected, non-blocking socket and its two libevent events: the byte transport of a
/// ``TCPConnection`` on a loop with an `event_base`.
final class TCPSocketTransport: TCPTransport {
    /// The socket; owned: closed by ``close()``.
    let fd: Int32
    let remoteDescription: String
    let localPort: UInt16
    // `@exclusivity(unchecked)`: loop-confined like the connection's own state, one access at a
    // time, as the connection's own stored properties are.
    // LoopInvariants: "Loop confinement".

    /// `EV_READ|EV_PERSIST` on ``fd``, added while the connection wants input. Its callback
    /// argument is the connection, unretained: the loop's resource registry keeps the connection
    /// (and so this transport) alive until the event is freed in ``close()``.
    @exclusivity(unchecked) private var readEvent: OpaquePointer?
    /// `EV_WRITE|EV_PERSIST` on ``fd``, added while output waits for socket space; same
    /// ownership as ``readEvent``.
    @exclusivity(unchecked) private var writeEvent: OpaquePointer?
    private let base: OpaquePointer
    @exclusivity(unchecked) private var isOpen = true

    /// Wraps connected socket `fd` (made non-blocking here, `TCP_NODELAY` per `options`); on the
    /// loop's thread.
    init(fd: Int32, base: OpaquePointer, options: TCPConnectionOptions, remote: TCPSocketAddress?) {
        self.fd = fd
        self.base = base
        remoteDescription = (remote ?? TCPSocketAddress.remote(of: fd))?.description ?? "?"
        localPort = TCPSocketAddress.local(of: fd)?.port ?? 0
        let flags = fcntl(fd, F_GETFL)
        if flags & O_NONBLOCK == 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        if options.noDelay { setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1) }
    }

    func attach(to connection: TCPConnection) {
        // LoopInvariants: "Unretained callback arguments": see `readEvent`.
        let context = Unmanaged.passUnretained(connection).toOpaque()
        readEvent = event_new(
            base, fd, Int16(EV_READ | EV_PERSIST),
            { _, _, context in
                Unmanaged<TCPConnection>.fromOpaque(context!).takeUnretainedValue().transportReadable()
            }, context)
        writeEvent = event_new(
            base, fd, Int16(EV_WRITE | EV_PERSIST),
            { _, _, context in
                Unmanaged<TCPConnection>.fromOpaque(context!).takeUnretainedValue().transportWritable()
            }, context)
        guard readEvent != nil, writeEvent != nil else {
            fatalError("TCPConnection: event_new failed (out of memory)")
        }
    }

    @inline(__always)
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TCPTransportReceive {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .received(count) }
            if count == 0 { return .endOfInput }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(.fromSocketErrno(code))
        }
    }

    @inline(__always)
    func send(_ bytes: UnsafeRawBufferPointer) -> TCPTransportSend {
        while true {
            // MSG_NOSIGNAL: a dead peer gives EPIPE here instead of killing the process.
            let sent = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if sent >= 0 { return .sent(sent) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(.fromSocketErrno(code))
        }
    }

    @inline(__always)
    func setReadInterest(_ wanted: Bool) {
        guard let readEvent else { return }
        if wanted {
            event_add(readEvent, nil)
        } else {
            event_del(readEvent)
        }
    }

    @inline(__always)
    func setWriteInterest(_ wanted: Bool) {
        guard let writeEvent else { return }
        if wanted {
            event_add(writeEvent, nil)
        } else {
            event_del(writeEvent)
        }
    }

    func shutdownOutput() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        // Freeing an event from inside its own callback is allowed (this is the base's thread).
        if let readEvent { event_free(readEvent) }
        if let writeEvent { event_free(writeEvent) }
        readEvent = nil
        writeEvent = nil
        closeDescriptor(fd)
    }
}
