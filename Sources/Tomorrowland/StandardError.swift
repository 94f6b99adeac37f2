#if canImport(Glibc)
    import Glibc
#endif

/// Writes `line` and a newline to standard error in one `write(2)`: no stdio buffer, no shared
/// `FILE *` (which Swift 6 does not let a `Sendable` closure touch).
package func writeLineToStandardError(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    bytes.withUnsafeMutableBytes { buffer in
        _ = write(2, buffer.baseAddress, buffer.count)
    }
}
