/// Decimal integers as Redis reads and writes them in values and arguments.
enum ASCIIInteger {
    /// Parses a 64-bit decimal as Redis's `string2ll`: optional `-`, no `+`, no spaces, no
    /// leading zeros (except `0` itself), within Int64's range.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        guard count > 0, count <= 20 else { return nil }
        var index = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
            guard count > 1 else { return nil }
        }
        if bytes[index] == UInt8(ascii: "0") {
            return count == index + 1 && !negative ? 0 : nil
        }
        var magnitude: UInt64 = 0
        while index < count {
            let digit = bytes[index] &- 48
            guard digit < 10 else { return nil }
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int.min : -Int(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int(magnitude)
    }

    static func parse(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// The decimal digits of `value`.
    static func bytes(_ value: Int) -> [UInt8] {
        Array(String(value).utf8)
    }
}
