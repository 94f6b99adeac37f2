/// What `loopkv`'s options configure.
public struct KeyValueServerConfiguration: Sendable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The TCP port; 0 picks a free one.
    public var port: UInt16 = 6379
    /// How many loops the daemon makes its group with (the server uses the group it is given).
    public var loopCount = 1
    /// Most clients connected at once; further ones get an error and are closed.
    public var maxClients = 10_000
    /// Nil: clients may stay idle forever (Redis's `timeout 0`).
    public var idleTimeout: Duration?
    /// The largest request accepted, in bytes.
    public var maxRequestBytes = 64 * 1024 * 1024
    /// How long a graceful shutdown waits for clients to take their last replies before closing
    /// them hard (``KeyValueProcess``'s grace period).
    public var shutdownGrace: Duration = .seconds(5)

    /// The defaults: port 6379 on 127.0.0.1, one loop, no idle timeout.
    public init() {}
}
