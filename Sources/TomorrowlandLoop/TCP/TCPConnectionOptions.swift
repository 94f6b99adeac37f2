/// Limits and socket options of a ``TCPConnection``.
public struct TCPConnectionOptions: Sendable {
    /// The bound on buffered, unconsumed input. Past it the connection closes with
    /// ``TCPError/inputLimitExceeded(limit:)`` (a `read(exactly:)` of a larger count raises the
    /// bound to its count while it is pending).
    public var maxInputBytes: Int = 1 << 20
    /// Above this many pending output bytes, ``TCPConnection/isWritable`` is false; once the
    /// pending bytes drop below it again, ``TCPConnection/onWritable`` is called.
    public var writeHighWaterMark: Int = 1 << 20
    /// `TCP_NODELAY`: send small writes at once instead of coalescing them (Nagle).
    public var noDelay: Bool = true

    /// The defaults: 1 MiB of input, a 1 MiB write high-water mark, `TCP_NODELAY` on.
    public init() {}
}
