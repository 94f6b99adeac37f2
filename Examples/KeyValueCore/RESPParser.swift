/// An incremental parser for RESP2 requests: multibulk (`*N\r\n$len\r\narg\r\n…`, what clients
/// send) and inline (`PING\r\n`, what telnet users and `redis-benchmark`'s PING_INLINE send).
///
/// It parses in place: ``parse(_:)`` looks at the unconsumed input, and on success the arguments
/// are views (``argument(_:)``) into that input, or into the parser's scratch space for inline
/// requests, so that the hot path copies no bytes. A request that arrives in pieces is resumed
/// where the previous call stopped: after ``Step/incomplete`` the next call must pass the same
/// bytes again with more appended (the way a connection keeps unconsumed input buffered), or the
/// caller calls ``reset()``.
///
/// Bounds: a request whose declared or actual size exceeds `maxRequestBytes` fails with
/// ``RESPProtocolError/requestTooLarge(limit:)`` as soon as its headers say so, before its body
/// arrives; headers and inline lines are bounded too, so buffered input never grows unbounded
/// while the parser waits.
///
/// A struct, so that its hot state is not subject to the dynamic exclusivity checks that every
/// mutation of a class's stored property costs, a large share of a request's parsing. Not
/// thread-safe: one parser per connection, used on that
/// connection's thread; copies share the inline scratch space, so do not use two at once.
public struct RESPParser {
    /// What one call to ``parse(_:)`` found at the front of the input.
    public enum Step: Equatable {
        /// A complete request of `consumed` bytes; its arguments are available until the next
        /// call (zero arguments for an empty request, which gets no reply).
        case command(consumed: Int)
        /// More bytes are needed.
        case incomplete
        /// The input is not valid RESP, or too large; the connection should be answered and closed.
        case failed(RESPProtocolError)
    }

    /// The largest request, in bytes, that ``parse(_:)`` accepts.
    public let maxRequestBytes: Int

    /// The longest header line (`*N` or `$N` with CRLF) examined: a sign, 18 digits and slack.
    static let maxHeaderBytes = 32
    /// The longest inline request line, as Redis's PROTO_INLINE_MAX_SIZE (further bounded by
    /// `maxRequestBytes`).
    static let maxInlineBytes = 64 * 1024
    /// The most arguments in one multibulk request, as Redis (1024 * 1024).
    static let maxArgumentCount = 1024 * 1024

    // The current request's arguments: the first `rangeCount` byte ranges, relative to
    // `argumentBase`. The array is only overwritten and grown, never cleared: clearing an array
    // costs a generic call per request.
    var ranges: [Range<Int>] = []
    var rangeCount = 0
    var argumentBase: UnsafeRawPointer?

    // Resumption state of a multibulk request received in part: the declared argument count
    // (-1 when no request is in progress) and the offset at which the next argument header starts.
    private var expectedCount = -1
    private var resumeOffset = 0
    // How far an incomplete inline line was searched for its newline, so that a line arriving
    // byte by byte is scanned once, not once per byte (quadratic).
    var inlineScanned = 0

    // Inline requests are unescaped into this buffer; inline arguments are views into it.
    let scratch = ScratchSpace()

    /// A parser refusing requests larger than `maxRequestBytes` (at least 16).
    public init(maxRequestBytes: Int) {
        precondition(maxRequestBytes >= 16, "RESPParser: maxRequestBytes must be at least 16")
        self.maxRequestBytes = maxRequestBytes
        ranges.reserveCapacity(8)
    }

    /// The number of arguments of the request the last ``parse(_:)`` returned.
    public var argumentCount: Int { rangeCount }

    /// The bytes of argument `index` of the request the last ``parse(_:)`` returned.
    ///
    /// - Important: valid until the next call to ``parse(_:)`` and only while the input passed
    ///   to it is alive and unchanged.
    @inline(__always)
    public func argument(_ index: Int) -> UnsafeRawBufferPointer {
        precondition(index < rangeCount, "RESPParser.argument(_:): index beyond argumentCount")
        let range = ranges[index]
        return UnsafeRawBufferPointer(start: argumentBase! + range.lowerBound, count: range.count)
    }

    /// Forgets a partially parsed request (use when the input it was parsed from is discarded).
    public mutating func reset() {
        expectedCount = -1
        resumeOffset = 0
        inlineScanned = 0
        rangeCount = 0
        argumentBase = nil
    }

    /// Parses one request from the front of `buffer`.
    ///
    /// - Returns: ``Step/command(consumed:)`` with the request's size (drop that many bytes from
    ///   the front before the next call), ``Step/incomplete``, or ``Step/failed(_:)``.
    public mutating func parse(_ buffer: UnsafeRawBufferPointer) -> Step {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .incomplete }
        if expectedCount < 0 && base.load(as: UInt8.self) != UInt8(ascii: "*") {
            return parseInline(buffer)
        }
        argumentBase = base
        return parseMultibulk(buffer)
    }

    // MARK: - Multibulk

    private mutating func parseMultibulk(_ buffer: UnsafeRawBufferPointer) -> Step {
        var offset: Int
        if expectedCount < 0 {
            rangeCount = 0
            switch Self.header(in: buffer, at: 0) {
            case .incomplete: return .incomplete
            case .failed(let error): return .failed(error)
            case .value(let count, let next):
                guard count >= -1, count <= Self.maxArgumentCount else { return .failed(.invalidMultibulkLength) }
                // Each argument takes at least 6 bytes ("$0\r\n\r\n"): refuse a count that alone
                // announces a request over the limit, before buffering any of it.
                guard count <= maxRequestBytes / 6 else { return .failed(.requestTooLarge(limit: maxRequestBytes)) }
                if count <= 0 { return .command(consumed: next) }
                expectedCount = count
                offset = next
            }
        } else {
            offset = resumeOffset
        }
        while rangeCount < expectedCount {
            guard offset < buffer.count else { return suspend(at: offset) }
            let marker = buffer[offset]
            guard marker == UInt8(ascii: "$") else {
                reset()
                return .failed(.expectedBulk(found: marker))
            }
            switch Self.header(in: buffer, at: offset) {
            case .incomplete:
                return suspend(at: offset)
            case .failed(let error):
                reset()
                return .failed(error)
            case .value(let length, let bodyStart):
                guard length >= 0 else {
                    reset()
                    return .failed(.invalidBulkLength)
                }
                guard length <= maxRequestBytes, bodyStart + length + 2 <= maxRequestBytes else {
                    reset()
                    return .failed(.requestTooLarge(limit: maxRequestBytes))
                }
                guard bodyStart + length + 2 <= buffer.count else { return suspend(at: offset) }
                guard buffer[bodyStart + length] == 13, buffer[bodyStart + length + 1] == 10 else {
                    reset()
                    return .failed(.missingBulkTerminator)
                }
                appendRange(bodyStart..<(bodyStart + length))
                offset = bodyStart + length + 2
            }
        }
        expectedCount = -1
        resumeOffset = 0
        return .command(consumed: offset)
    }

    @inline(__always)
    mutating func appendRange(_ range: Range<Int>) {
        if rangeCount < ranges.count {
            ranges[rangeCount] = range
        } else {
            ranges.append(range)
        }
        rangeCount += 1
    }

    private mutating func suspend(at offset: Int) -> Step {
        resumeOffset = offset
        return .incomplete
    }

    private enum Header {
        case value(Int, next: Int)
        case incomplete
        case failed(RESPProtocolError)
    }

    /// Reads `<marker><integer>\r\n` at `start`; `next` is the offset after the CRLF.
    @inline(__always)
    private static func header(in buffer: UnsafeRawBufferPointer, at start: Int) -> Header {
        var index = start + 1
        let limit = min(buffer.count, start + Self.maxHeaderBytes)
        var negative = false
        if index < limit && buffer[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var value = 0
        var digits = 0
        while index < limit {
            let byte = buffer[index]
            if byte == 13 {
                guard index + 1 < buffer.count else { return .incomplete }
                guard buffer[index + 1] == 10, digits > 0 else {
                    return .failed(buffer[start] == UInt8(ascii: "*") ? .invalidMultibulkLength : .invalidBulkLength)
                }
                return .value(negative ? -value : value, next: index + 2)
            }
            guard byte &- 48 < 10, digits < 18 else {
                return .failed(buffer[start] == UInt8(ascii: "*") ? .invalidMultibulkLength : .invalidBulkLength)
            }
            value = value * 10 + Int(byte &- 48)
            digits += 1
            index += 1
        }
        // The digit bound above fails any header before `maxHeaderBytes`, so running out of
        // bytes here means the header is still arriving.
        return .incomplete
    }
}

/// Memory the parser unescapes inline requests into (grown on demand, freed with the last parser
/// sharing it).
///
/// A class so that the parser can stay a struct while owning manually allocated memory.
final class ScratchSpace {
    private(set) var bytes: UnsafeMutableRawBufferPointer = .allocate(byteCount: 256, alignment: 1)

    /// The buffer, at least `count` bytes long (its contents are not preserved when it grows).
    func reserve(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if bytes.count < count {
            bytes.deallocate()
            bytes = .allocate(byteCount: max(count, bytes.count * 2), alignment: 1)
        }
        return bytes
    }

    deinit {
        bytes.deallocate()
    }
}
