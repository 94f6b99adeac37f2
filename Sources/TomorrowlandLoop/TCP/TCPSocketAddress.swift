import CLibevent
import Glibc

/// An IPv4 or IPv6 socket address, as `getaddrinfo` and `accept` produce it.
///
/// A ``NameResolver`` answers with these: made from an IP literal with
/// ``init(ipAddress:port:)``, or copied from a `sockaddr` with ``init(_:length:)``.
public struct TCPSocketAddress: Sendable, CustomStringConvertible {
    /// The address, in a buffer large enough for any family (and aligned for each): LoopInvariants:
    /// "Socket addresses in sockaddr_storage" is what the raw reads below rely on.
    var storage = sockaddr_storage()
    /// The meaningful length of ``storage``.
    var length: socklen_t = 0

    init() {}

    /// Copies `length` bytes of `address` (an `AF_INET` or `AF_INET6` address; the pointer is
    /// not kept).
    ///
    /// - Parameters:
    ///   - address: The address, e.g. an `addrinfo`'s `ai_addr`.
    ///   - length: Its length in bytes; at most `sockaddr_storage`'s size is copied.
    public init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        let count = Swift.min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(start: address, count: count))
        }
        self.length = socklen_t(count)
    }

    /// The address of an IPv4 or IPv6 literal ("127.0.0.1", "::1", "[::1]", "fe80::1%eth0") and
    /// `port`, or nil when `ipAddress` is not a literal. Parses only: nothing is looked up.
    ///
    /// - Parameters:
    ///   - ipAddress: The literal.
    ///   - port: The port, in host byte order.
    public init?(ipAddress: String, port: UInt16) {
        guard !ipAddress.isEmpty, ipAddress != "*",
            let first = Self.literal(host: ipAddress, port: port)?.first
        else { return nil }
        self = first
    }

    /// `AF_INET` or `AF_INET6`.
    public var family: Int32 { Int32(storage.ss_family) }

    /// The port, in host byte order.
    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET: UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
            case AF_INET6: UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
            default: 0
            }
        }
    }

    /// "127.0.0.1:54321" or "[::1]:54321".
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let ok = withUnsafeBytes(of: storage) { raw -> Bool in
            switch family {
            case AF_INET:
                var address = raw.load(as: sockaddr_in.self).sin_addr
                return inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil
            case AF_INET6:
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                return inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil
            default:
                return false
            }
        }
        guard ok else { return "?" }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length; the pointer is valid
    /// for the call only (LoopInvariants: "Socket addresses in sockaddr_storage").
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// The addresses for `host` and `port`, in the resolver's order; may block.
    ///
    /// IP literals (`127.0.0.1`, `::1`, with or without brackets) never touch the resolver;
    /// "localhost" and other names go through `getaddrinfo` (which reads `/etc/hosts` for
    /// "localhost", and may block on DNS for other names: never call it on a loop's thread with
    /// a name, see ``SystemNameResolver``). An empty host or "*" means every local address (for
    /// listeners).
    package static func resolve(host: String, port: UInt16, passive: Bool) throws(TCPError) -> [TCPSocketAddress] {
        try lookUp(host: host, port: port, passive: passive, numericOnly: false)
    }

    /// The addresses for `host` and `port` when `host` is an IP literal (with or without
    /// brackets, IPv6 with a `%zone`), empty or "*" (every local address); nil for a name, which
    /// needs a resolver. Never blocks: nothing is looked up.
    package static func literal(host: String, port: UInt16) -> [TCPSocketAddress]? {
        try? lookUp(host: host, port: port, passive: false, numericOnly: true)
    }

    /// `getaddrinfo` for stream sockets; with `numericOnly` (`AI_NUMERICHOST`) it only parses.
    private static func lookUp(
        host: String, port: UInt16, passive: Bool, numericOnly: Bool
    ) throws(TCPError) -> [TCPSocketAddress] {
        var name = host
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let anyAddress = name.isEmpty || name == "*"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_NUMERICSERV | (passive || anyAddress ? AI_PASSIVE : 0) | (numericOnly ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status: Int32
        if anyAddress {
            status = getaddrinfo(nil, String(port), &hints, &list)
        } else {
            status = getaddrinfo(name, String(port), &hints, &list)
        }
        guard status == 0, let list else { throw .addressResolutionFailed(host: host) }
        // The list is ours until `freeaddrinfo`: copied into values first, freed on every path.
        defer { freeaddrinfo(list) }
        var addresses: [TCPSocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
                entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6
            {
                addresses.append(TCPSocketAddress(address, length: entry.pointee.ai_addrlen))
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .addressResolutionFailed(host: host) }
        return addresses
    }

    /// The local address of socket `fd`. The pointer given to `getsockname` lives for that call
    /// (LoopInvariants: "Socket addresses in sockaddr_storage"); so in `remote(of:)`.
    static func local(of fd: Int32) -> TCPSocketAddress? {
        var address = TCPSocketAddress()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutableBytes(of: &address.storage) { raw in
            getsockname(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard status == 0 else { return nil }
        address.length = length
        return address
    }

    /// The peer address of socket `fd`.
    static func remote(of fd: Int32) -> TCPSocketAddress? {
        var address = TCPSocketAddress()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutableBytes(of: &address.storage) { raw in
            getpeername(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard status == 0 else { return nil }
        address.length = length
        return address
    }
}

/// Sets an integer socket option, returning whether it worked.
@discardableResult
func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) -> Bool {
    var value = value
    return setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
}
