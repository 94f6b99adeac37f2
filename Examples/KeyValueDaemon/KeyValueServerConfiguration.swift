/// What `loopkv`'s options configure.
struct KeyValueServerConfiguration: Sendable {
    var host = "127.0.0.1"
    var port: UInt16 = 6379
    var loopCount = 1
    var maxClients = 10_000
    /// Nil: clients may stay idle forever (Redis's `timeout 0`).
    var idleTimeout: Duration?
    var maxRequestBytes = 64 * 1024 * 1024
    /// How long a graceful shutdown waits for clients to take their last replies before closing
    /// them hard (the `EventLoopGroupService`'s grace period).
    var shutdownGrace: Duration = .seconds(5)
}
