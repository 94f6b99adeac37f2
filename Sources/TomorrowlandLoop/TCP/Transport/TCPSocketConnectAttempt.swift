import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking `connect` of a socket to one address, on a loop with an `event_base`: the
/// connect attempt of `LibeventBackend`.
///
/// Loop-confined. Its owner (the connector, kept by the loop's resource registry) keeps it alive
/// while its write event, whose callback argument is `self`, unretained, exists.
final class TCPSocketConnectAttempt: TCPConnectAttempt {
    private let loop: EventLoop
    private let base: OpaquePointer
    private let options: TCPConnectionOptions
    /// Taken when the attempt completes or is cancelled: it runs at most once.
    private var completion: ((Result<any TCPTransport, TCPError>) -> Void)?
    /// The socket being connected, -1 once handed to the transport or closed.
    private var fd: Int32 = -1
    /// One-shot `EV_WRITE` on ``fd``: the connection completed or failed.
    private var event: OpaquePointer?

    init(
        loop: EventLoop, base: OpaquePointer, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) {
        self.loop = loop
        self.base = base
        self.options = options
        self.completion = completion
    }

    var isPending: Bool { completion != nil }

    /// Opens the socket and connects it to `address`: completes at once when the kernel answers
    /// at once, or when the socket becomes writable.
    func start(to address: TCPSocketAddress) {
        let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        fd = socket(address.family, socketType, 0)
        guard fd >= 0 else {
            complete(.failure(.connectFailed(errno: errno)))
            return
        }
        let status = address.withSockAddr { connect(fd, $0, $1) }
        if status == 0 {
            succeed()
            return
        }
        let code = errno
        guard code == EINPROGRESS else {
            fail(.connectFailed(errno: code))
            return
        }
        // LoopInvariants: "Unretained callback arguments": the owner keeps `self` until
        // `cancel()` or the completion, both after the event is freed.
        event = event_new(
            base, fd, Int16(EV_WRITE),
            { _, _, context in
                let attempt = Unmanaged<TCPSocketConnectAttempt>.fromOpaque(context!).takeUnretainedValue()
                attempt.loop.withCallbackEntered { attempt.connectCompleted() }
            }, Unmanaged.passUnretained(self).toOpaque())
        guard let event, event_add(event, nil) == 0 else {
            fatalError("TCPConnection.connect: event_new failed (out of memory)")
        }
    }

    func cancel() {
        completion = nil
        freeEvent()
        if fd >= 0 { closeDescriptor(fd) }
        fd = -1
    }

    /// The socket became writable: the connect finished, one way or the other.
    private func connectCompleted() {
        freeEvent()
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        if code == 0 {
            succeed()
        } else {
            fail(.connectFailed(errno: code))
        }
    }

    private func succeed() {
        let transport = TCPSocketTransport(fd: fd, base: base, options: options, remote: nil)
        fd = -1
        complete(.success(transport))
    }

    private func fail(_ error: TCPError) {
        closeDescriptor(fd)
        fd = -1
        complete(.failure(error))
    }

    private func freeEvent() {
        if let event { event_free(event) }
        event = nil
    }

    private func complete(_ outcome: Result<any TCPTransport, TCPError>) {
        guard let completion else { return }
        self.completion = nil
        completion(outcome)
    }
}
