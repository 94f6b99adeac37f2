/// A TCP endpoint to probe: a host (IP literal or name) and a port.
public struct ProbeEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The host, without brackets for IPv6 literals.
    public let host: String
    /// The port.
    public let port: UInt16

    /// An endpoint from its parts.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses "host:port", "[v6-literal]:port" or "v6-literal:port" (the last colon separates
    /// the port); nil when the port is missing or not in 1...65535, or the host is empty.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        guard !host.isEmpty, !host.contains("[") && !host.contains("]") else { return nil }
        self.init(host: host, port: port)
    }

    /// "host:port", with brackets around IPv6 literals.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
