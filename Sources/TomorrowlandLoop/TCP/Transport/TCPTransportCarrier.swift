/// A connection's transport, the socket case concrete so that calls on a libevent loop's
/// connections are direct (and inlined) rather than through ``TCPTransport``'s witness table.
enum TCPTransportCarrier {
    case socket(TCPSocketTransport)
    case other(any TCPTransport)

    @inline(__always)
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TCPTransportReceive {
        switch self {
        case .socket(let socket): socket.receive(into: buffer)
        case .other(let other): other.receive(into: buffer)
        }
    }

    @inline(__always)
    func send(_ bytes: UnsafeRawBufferPointer) -> TCPTransportSend {
        switch self {
        case .socket(let socket): socket.send(bytes)
        case .other(let other): other.send(bytes)
        }
    }

    @inline(__always)
    func setReadInterest(_ wanted: Bool) {
        switch self {
        case .socket(let socket): socket.setReadInterest(wanted)
        case .other(let other): other.setReadInterest(wanted)
        }
    }

    @inline(__always)
    func setWriteInterest(_ wanted: Bool) {
        switch self {
        case .socket(let socket): socket.setWriteInterest(wanted)
        case .other(let other): other.setWriteInterest(wanted)
        }
    }
}
