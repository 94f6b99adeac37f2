#if canImport(Glibc)
    import Glibc
#endif

/// Errors of TCP operations: rejected promises of ``TCPConnection`` and
/// ``TCPListener/bind(host:port:on:options:onAccept:)``, and errors thrown by
/// ``TCPListener/listen(host:port:on:options:onAccept:)``.
public enum TCPError: Error, Sendable, Hashable {
    /// The host is neither an IP literal nor a name the resolver knows.
    case addressResolutionFailed(host: String)
    /// Creating, binding or listening on the socket failed (`EADDRINUSE`, `EACCES`...).
    case bindFailed(errno: Int32)
    /// The connection attempt failed (`ECONNREFUSED`, `ENETUNREACH`...).
    case connectFailed(errno: Int32)
    /// The connection attempt did not complete within its timeout.
    case timedOut
    /// The peer reset the connection (`ECONNRESET`, `EPIPE`).
    case connectionReset
    /// The operation was issued on, or was pending at, a closed connection; or it needed a loop
    /// that has shut down (a listener or connection attempt on a loop that shut down before it
    /// could start).
    case closed
    /// The peer sent end of input before a `read(upTo:maxBytes:)` or `read(exactly:)` could
    /// complete.
    case endOfInput
    /// Buffered, unconsumed input passed the connection's limit (``TCPConnectionOptions/maxInputBytes``,
    /// or the `maxBytes` of a `read(upTo:maxBytes:)`).
    case inputLimitExceeded(limit: Int)
    /// Another system call failed with this `errno`.
    case system(errno: Int32)
}

extension TCPError {
    /// The error for a failed `recv`/`send` with `code`.
    static func fromSocketErrno(_ code: Int32) -> TCPError {
        switch code {
        case ECONNRESET, EPIPE, ECONNABORTED: .connectionReset
        default: .system(errno: code)
        }
    }
}
