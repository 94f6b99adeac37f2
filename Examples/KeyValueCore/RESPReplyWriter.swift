/// Encodes RESP2 replies by appending them to a byte buffer.
///
/// The daemon encodes every reply of a read's pipelined requests into one writer and hands the
/// bytes to the connection once, so a batch of 16 requests costs one write.
public struct RESPReplyWriter: Sendable {
    /// The encoded replies so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 4096) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Drops the encoded bytes, keeping the storage.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Drops the encoded bytes, keeping the storage only while it holds at most `limit` bytes: a
    /// writer that once encoded a large batch does not keep that memory afterwards.
    public mutating func removeAll(keepingCapacityUpTo limit: Int) {
        bytes.removeAll(keepingCapacity: bytes.capacity <= limit)
    }

    /// `+<text>\r\n`. `text` must not contain CR or LF.
    public mutating func simpleString(_ text: StaticString) {
        bytes.append(UInt8(ascii: "+"))
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        crlf()
    }

    /// `+OK\r\n`.
    public mutating func ok() {
        simpleString("OK")
    }

    /// `-<message>\r\n`; CR and LF in `message` become spaces, as Redis does.
    public mutating func error(_ message: String) {
        bytes.append(UInt8(ascii: "-"))
        for byte in message.utf8 {
            bytes.append(byte == 13 || byte == 10 ? 32 : byte)
        }
        crlf()
    }

    /// `:<value>\r\n`.
    public mutating func integer(_ value: Int) {
        bytes.append(UInt8(ascii: ":"))
        decimal(value)
        crlf()
    }

    /// `$<count>\r\n<bytes>\r\n`.
    public mutating func bulk(_ value: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "$"))
        decimal(value.count)
        crlf()
        bytes.append(contentsOf: value)
        crlf()
    }

    /// `$<count>\r\n<bytes>\r\n`.
    public mutating func bulk(_ value: [UInt8]) {
        value.withUnsafeBytes { bulk($0) }
    }

    /// A bulk string of `text`'s UTF-8.
    public mutating func bulk(_ text: String) {
        var text = text
        text.withUTF8 { bulk(UnsafeRawBufferPointer($0)) }
    }

    /// `$-1\r\n`, the nil reply.
    public mutating func null() {
        bytes.append(contentsOf: [UInt8(ascii: "$"), UInt8(ascii: "-"), UInt8(ascii: "1"), 13, 10])
    }

    /// `*<count>\r\n`; the caller then appends `count` elements.
    public mutating func arrayHeader(_ count: Int) {
        bytes.append(UInt8(ascii: "*"))
        decimal(count)
        crlf()
    }

    @inline(__always)
    private mutating func crlf() {
        bytes.append(13)
        bytes.append(10)
    }

    /// Appends `value` in decimal without going through `String`.
    private mutating func decimal(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) + 48)
            return
        }
        // Digits are produced last-first into a 20-byte tuple; Int.min's magnitude fits in UInt.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { raw in
            var index = raw.count
            repeat {
                index -= 1
                raw[index] = UInt8(truncatingIfNeeded: magnitude % 10) + 48
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                raw[index] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[index...]))
        }
    }
}
