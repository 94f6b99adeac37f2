/// One RESP2 reply as the simulated clients read it and the model predicts it.
public enum ModelReply: Hashable, Sendable, CustomStringConvertible {
    /// `+text`.
    case simple(String)
    /// `-text`.
    case error(String)
    /// `:n`.
    case integer(Int)
    /// `$n` and its bytes, or `$-1` (nil).
    case bulk([UInt8]?)

    /// The reply as redis-cli would show it, for failure messages.
    public var description: String {
        switch self {
        case .simple(let text): "+\(text)"
        case .error(let text): "-\(text)"
        case .integer(let value): ":\(value)"
        case .bulk(nil): "(nil)"
        case .bulk(let bytes?): "\"\(String(decoding: bytes, as: UTF8.self))\""
        }
    }

    /// Parses the first complete reply of `bytes`: the reply and the bytes it took, nil when
    /// more bytes are needed; throws on bytes that are not a reply of these kinds.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(ModelReplyError) -> (ModelReply, Int)? {
        guard let first = bytes.first else { return nil }
        // The line after the type byte (a CR as the type byte is no reply: the switch throws).
        guard let lineEnd = lineEnd(in: bytes.dropFirst()) else { return nil }
        let line = String(decoding: bytes[(bytes.startIndex + 1)..<lineEnd], as: UTF8.self)
        let afterLine = lineEnd + 2 - bytes.startIndex
        switch first {
        case UInt8(ascii: "+"):
            return (.simple(line), afterLine)
        case UInt8(ascii: "-"):
            return (.error(line), afterLine)
        case UInt8(ascii: ":"):
            guard let value = Int(line) else { throw ModelReplyError(text: "bad integer \(line)") }
            return (.integer(value), afterLine)
        case UInt8(ascii: "$"):
            guard let length = Int(line), length >= -1 else { throw ModelReplyError(text: "bad length \(line)") }
            if length == -1 { return (.bulk(nil), afterLine) }
            guard bytes.count >= afterLine + length + 2 else { return nil }
            let start = bytes.startIndex + afterLine
            return (.bulk(Array(bytes[start..<(start + length)])), afterLine + length + 2)
        default:
            throw ModelReplyError(text: "unexpected reply type byte \(first)")
        }
    }

    private static func lineEnd(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}

/// Bytes from the server that are not a RESP2 reply.
struct ModelReplyError: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}
