extension RESPParser {
    /// Parses an inline request: one line of space-separated arguments, with Redis's quoting
    /// (`"…"` with `\n`, `\r`, `\t`, `\b`, `\a`, `\xHH` and `\<any>` escapes, `'…'` with `\'`).
    ///
    /// The unescaped arguments are written to the scratch buffer, so ``argument(_:)`` views it.
    mutating func parseInline(_ buffer: UnsafeRawBufferPointer) -> Step {
        let limit = min(Self.maxInlineBytes, maxRequestBytes)
        let searched = min(buffer.count, limit)
        guard let newline = buffer[min(inlineScanned, searched)..<searched].firstIndex(of: 10) else {
            if buffer.count >= limit {
                inlineScanned = 0
                return .failed(.inlineRequestTooLong)
            }
            inlineScanned = searched
            return .incomplete
        }
        inlineScanned = 0
        var end = newline
        if end > 0 && buffer[end - 1] == 13 { end -= 1 }
        let scratch = self.scratch.reserve(end)
        rangeCount = 0
        argumentBase = UnsafeRawPointer(scratch.baseAddress!)
        // Unescaping only shrinks, so the output never outruns the input: `written <= index`.
        var written = 0
        var index = 0
        while true {
            while index < end && Self.isSpace(buffer[index]) { index += 1 }
            if index == end { break }
            let start = written
            let quote = buffer[index]
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                index += 1
                var closed = false
                while index < end {
                    let byte = buffer[index]
                    if byte == quote {
                        closed = true
                        index += 1
                        break
                    }
                    if byte == UInt8(ascii: "\\") && index + 1 < end {
                        if quote == UInt8(ascii: "'") {
                            if buffer[index + 1] == UInt8(ascii: "'") {
                                scratch[written] = UInt8(ascii: "'")
                                index += 2
                            } else {
                                scratch[written] = byte
                                index += 1
                            }
                        } else if let (decoded, length) = Self.escape(in: buffer, at: index, end: end) {
                            scratch[written] = decoded
                            index += length
                        } else {
                            scratch[written] = byte
                            index += 1
                        }
                        written += 1
                        continue
                    }
                    scratch[written] = byte
                    written += 1
                    index += 1
                }
                // As Redis: a closing quote must end the argument.
                guard closed, index == end || Self.isSpace(buffer[index]) else {
                    rangeCount = 0
                    return .failed(.unbalancedQuotes)
                }
            } else {
                while index < end && !Self.isSpace(buffer[index]) {
                    scratch[written] = buffer[index]
                    written += 1
                    index += 1
                }
            }
            appendRange(start..<written)
        }
        return .command(consumed: newline + 1)
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 32 || (byte >= 9 && byte <= 13)
    }

    /// Decodes the escape at `index` (a backslash inside double quotes): the byte and the
    /// number of input bytes it took.
    private static func escape(in buffer: UnsafeRawBufferPointer, at index: Int, end: Int) -> (UInt8, Int)? {
        let next = buffer[index + 1]
        switch next {
        case UInt8(ascii: "n"): return (10, 2)
        case UInt8(ascii: "r"): return (13, 2)
        case UInt8(ascii: "t"): return (9, 2)
        case UInt8(ascii: "b"): return (8, 2)
        case UInt8(ascii: "a"): return (7, 2)
        case UInt8(ascii: "x"):
            guard index + 3 < end, let high = hexValue(buffer[index + 2]), let low = hexValue(buffer[index + 3]) else {
                return (next, 2)
            }
            return (high << 4 | low, 4)
        default:
            return (next, 2)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
