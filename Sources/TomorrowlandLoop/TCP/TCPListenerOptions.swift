/// How a ``TCPListener`` sets up its socket and the connections it accepts.
public struct TCPListenerOptions: Sendable {
    /// The `listen(2)` backlog: how many completed connections the kernel queues before accept.
    public var backlog: Int32 = 511
    /// `SO_REUSEADDR`: rebind a port whose previous connections are in `TIME_WAIT`.
    public var reuseAddress: Bool = true
    /// `SO_REUSEPORT`: several sockets bind the same address and the kernel spreads incoming
    /// connections between them; one listener per loop of an ``EventLoopGroup``.
    public var reusePort: Bool = false
    /// The options applied to every accepted connection.
    public var connection: TCPConnectionOptions = .init()

    /// The defaults: backlog 511, `SO_REUSEADDR` on, `SO_REUSEPORT` off.
    public init() {}
}
