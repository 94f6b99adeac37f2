/// What a ``TCPListener`` binds: the host and port it was given and, where the loop's backend
/// resolves them before the hop to the loop, the addresses they resolved to (tried in order).
package struct TCPListenTarget: Sendable {
    /// The host as given: a literal, "localhost", or "" / "*" for every address.
    package let host: String
    /// The port as given, 0 for one chosen at bind time.
    package let port: UInt16
    /// The resolved addresses, empty for a backend that binds the name itself.
    package let addresses: [TCPSocketAddress]

    /// A target of `host`:`port`, resolved to `addresses`.
    package init(host: String, port: UInt16, addresses: [TCPSocketAddress] = []) {
        self.host = host
        self.port = port
        self.addresses = addresses
    }
}
