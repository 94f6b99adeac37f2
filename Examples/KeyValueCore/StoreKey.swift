#if canImport(Glibc)
    import Glibc
#endif

/// A key of the store: owned bytes when stored, borrowed bytes when looking up.
///
/// Looking a key up must not allocate: the request's key is a view into the connection's input
/// buffer, so lookups wrap that view (`.borrowed`) and hash and compare the same bytes as the
/// owned form. Only `.owned` keys are ever stored in a dictionary or heap; a `.borrowed` key lives
/// no longer than the call that made it, while the input it points into is alive.
enum StoreKey: Hashable, @unchecked Sendable {
    case owned([UInt8])
    case borrowed(UnsafeRawBufferPointer)

    /// Calls `body` with the key's bytes.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .owned(let bytes): return bytes.withUnsafeBytes(body)
        case .borrowed(let view): return body(view)
        }
    }

    /// The owned form (copies a borrowed key).
    var owned: StoreKey {
        switch self {
        case .owned: return self
        case .borrowed(let view): return .owned(Array(view))
        }
    }

    /// The bytes, copied.
    var bytes: [UInt8] {
        switch self {
        case .owned(let bytes): return bytes
        case .borrowed(let view): return Array(view)
        }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: StoreKey, rhs: StoreKey) -> Bool {
        lhs.withBytes { left in
            rhs.withBytes { right in
                left.count == right.count
                    && (left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }
}
