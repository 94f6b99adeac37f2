/// Where a RESP reply ends in a stream of bytes: what a client needs to split what it read into
/// replies before it parses them.
public enum RESPReplyFraming {
    /// The length in bytes of the complete reply starting at `start` (a simple string, error,
    /// integer, bulk string or array, arrays nested to any depth), or nil if `bytes` ends before
    /// the reply does or the reply's header is malformed.
    ///
    /// - Parameters:
    ///   - bytes: What was read so far.
    ///   - start: The index of the reply's type byte.
    /// - Returns: The reply's length, or nil.
    public static func completeReplyLength(in bytes: [UInt8], at start: Int) -> Int? {
        guard start < bytes.count, let lineEnd = lineEnd(in: bytes, from: start) else { return nil }
        let header = String(decoding: bytes[(start + 1)..<lineEnd], as: UTF8.self)
        let afterHeader = lineEnd + 2
        switch bytes[start] {
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: ":"):
            return afterHeader - start
        case UInt8(ascii: "$"):
            guard let count = Int(header) else { return nil }
            if count < 0 { return afterHeader - start }
            return bytes.count >= afterHeader + count + 2 ? afterHeader + count + 2 - start : nil
        case UInt8(ascii: "*"):
            guard let count = Int(header) else { return nil }
            var offset = afterHeader
            for _ in 0..<max(count, 0) {
                guard let length = completeReplyLength(in: bytes, at: offset) else { return nil }
                offset += length
            }
            return offset - start
        default:
            return nil
        }
    }

    /// The index of the first CR of a CRLF at or after `start`, or nil.
    private static func lineEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}
