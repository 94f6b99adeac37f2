/// Case-insensitive matching of a request's command name against the names the daemon knows.
enum CommandName {
    /// True if `bytes` is `name` (lowercase ASCII), ignoring ASCII case.
    @inline(__always)
    static func matches(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for index in 0..<bytes.count where bytes[index] | 0x20 != expected[index] {
            return false
        }
        return true
    }

    /// The bytes as text for error messages, lossily decoded and cut at `limit` bytes (Redis
    /// prints at most 128).
    static func text(_ bytes: UnsafeRawBufferPointer, limit: Int = 128) -> String {
        String(decoding: bytes.prefix(limit), as: UTF8.self)
    }
}
