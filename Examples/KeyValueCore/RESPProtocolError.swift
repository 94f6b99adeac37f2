/// Why a request could not be parsed; the daemon answers `-ERR Protocol error: <reason>` and
/// closes the connection, as Redis does.
public enum RESPProtocolError: Error, Sendable, Hashable {
    /// A multibulk header (`*N`) whose count is not a number or is out of bounds.
    case invalidMultibulkLength
    /// A bulk header (`$N`) whose length is not a number or is out of bounds.
    case invalidBulkLength
    /// Inside a multibulk request, a byte other than `$` where a bulk header must start.
    case expectedBulk(found: UInt8)
    /// An inline request line longer than the request limit.
    case inlineRequestTooLong
    /// An inline request with an unterminated quote.
    case unbalancedQuotes
    /// A bulk argument not followed by CRLF.
    case missingBulkTerminator
    /// The request, counted in bytes, exceeds `--max-request-bytes`.
    case requestTooLarge(limit: Int)

    /// The text after `Protocol error: ` in the reply, in Redis's words where Redis has them.
    public var reason: String {
        switch self {
        case .invalidMultibulkLength: return "invalid multibulk length"
        case .invalidBulkLength: return "invalid bulk length"
        case .expectedBulk(let byte): return "expected '$', got '\(Self.printable(byte))'"
        case .inlineRequestTooLong: return "too big inline request"
        case .unbalancedQuotes: return "unbalanced quotes in request"
        case .missingBulkTerminator: return "bulk argument not terminated by CRLF"
        case .requestTooLarge(let limit): return "request exceeds the limit of \(limit) bytes"
        }
    }

    private static func printable(_ byte: UInt8) -> String {
        (0x20..<0x7f).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
    }
}
