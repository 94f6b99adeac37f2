/// Turns a host name into socket addresses without blocking the thread that asks: the seam
/// through which ``TCPConnection/connect(host:port:on:timeout:options:)`` resolves names.
///
/// The library uses ``SystemNameResolver/shared`` (the system's `getaddrinfo`, on threads of its
/// own); tests inject resolvers that answer late or never, through the package-level
/// `TCPConnection.connect(host:port:on:timeout:options:nameResolver:)`.
package protocol NameResolver: Sendable {
    /// Starts resolving `resolution`'s host and port, and returns at once.
    ///
    /// Called on the connecting loop's thread, which must not wait: the answer is delivered
    /// later, from any thread, with ``NameResolution/complete(with:)``, or never (the connect's
    /// timeout covers a resolver that does not answer). A resolver may skip work for a
    /// resolution that ``NameResolution/isAbandoned`` says nobody waits for any more.
    func resolve(_ resolution: NameResolution)
}
