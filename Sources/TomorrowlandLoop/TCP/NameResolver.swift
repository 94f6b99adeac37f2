/// Turns a host name into socket addresses without blocking the thread that asks: the seam
/// through which ``TCPConnection/connect(host:port:on:timeout:options:)`` resolves names.
///
/// By default the library uses the system's `getaddrinfo`, on up to eight threads of its own, so
/// that `/etc/hosts`, nsswitch and `gai.conf` apply. Pass another resolver (a cache, another DNS
/// client, a test double that answers late or never) to
/// ``TCPConnection/connect(host:port:on:timeout:options:nameResolver:)``.
public protocol NameResolver: Sendable {
    /// Starts resolving `resolution`'s host and port, and returns at once.
    ///
    /// Called on the connecting loop's thread, which must not wait: the answer is delivered
    /// later, from any thread, with ``NameResolution/complete(with:)``, or never (the connect's
    /// timeout covers a resolver that does not answer). A resolver may skip work for a
    /// resolution that ``NameResolution/isAbandoned`` says nobody waits for any more.
    func resolve(_ resolution: NameResolution)
}
