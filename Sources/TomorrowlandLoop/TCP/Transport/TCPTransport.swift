/// The byte transport under a ``TCPConnection``: the seam between the connection's one
/// implementation (state machine, buffers, backpressure, promise reads and writes, callbacks) and
/// whatever carries its bytes.
///
/// Two implementations: `TCPSocketTransport` (a non-blocking socket and its libevent events, on a
/// loop made with `EventLoop()`) and a simulated network's link end (module
/// TomorrowlandSimulation). The connection owns its transport; the transport tells the connection
/// about readiness through ``TCPConnection/transportReadable()`` and
/// ``TCPConnection/transportWritable()``, on the loop's thread, and only while the matching
/// interest is set. Every member is called on the loop's thread.
package protocol TCPTransport: AnyObject {
    /// The peer's address as users see it: "10.0.0.1:54321" or "[::1]:54321".
    var remoteDescription: String { get }
    /// The local port of the connection.
    var localPort: UInt16 { get }
    /// Binds the transport to the connection it serves; called once, from the connection's
    /// initializer, before any other member. The transport keeps no strong reference to it.
    func attach(to connection: TCPConnection)
    /// Copies received bytes into `buffer` without blocking. `buffer` is valid for the call only
    /// (LoopInvariants: "Byte buffer regions"); so is `bytes` in ``send(_:)``: never keep them.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TCPTransportReceive
    /// Hands as much of `bytes` to the transport as it takes now, without blocking.
    func send(_ bytes: UnsafeRawBufferPointer) -> TCPTransportSend
    /// Whether the connection wants ``TCPConnection/transportReadable()`` calls when input (or
    /// end of input, or an error) is there.
    func setReadInterest(_ wanted: Bool)
    /// Whether the connection wants a ``TCPConnection/transportWritable()`` call when the
    /// transport takes bytes again.
    func setWriteInterest(_ wanted: Bool)
    /// Ends the sending direction once: the peer reads end of input after the bytes sent so far.
    func shutdownOutput()
    /// Releases the transport for good (the socket is closed, the link end let go); after this
    /// it never calls the connection again. Idempotent.
    func close()
}

/// What ``TCPTransport/receive(into:)`` found.
package enum TCPTransportReceive {
    /// This many bytes (more than zero) were copied into the buffer.
    case received(Int)
    /// The peer ended its output, and everything before it was received.
    case endOfInput
    /// Nothing to read now.
    case wouldBlock
    /// The connection failed (reset, ...).
    case failed(TCPError)
}

/// What ``TCPTransport/send(_:)`` did.
package enum TCPTransportSend {
    /// This many bytes (possibly zero) were taken.
    case sent(Int)
    /// Nothing can be taken now; a ``TCPConnection/transportWritable()`` follows once it can,
    /// if write interest is set.
    case wouldBlock
    /// The connection failed (reset, broken pipe...).
    case failed(TCPError)
}
