/// An error type with no values, for promises that cannot be rejected.
///
/// Like `Never`, but `Hashable` and `Codable`, so that for example `PromiseResult<Int, NoError>`
/// is `Codable`. It does not conform to `Swift.Error`. `==` and `hash(into:)` are the synthesized
/// ones (never called: there is no value).
public enum NoError: Hashable, Codable, Sendable {
    /// Always throws `DecodingError.dataCorrupted`: there is no value to decode.
    public init(from decoder: Decoder) throws {
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: decoder.codingPath,
                debugDescription: "Tomorrowland.NoError does not support decoding."))
    }

    /// Unreachable: there is no value to encode.
    public func encode(to encoder: Encoder) throws {
        switch self {}
    }
}

/// Errors reported by Tomorrowland's callback adapters.
public enum PromiseCallbackError: Int, Error, Sendable {
    /// A completion handler was called with neither a value nor an error.
    case apiMismatch = 0
}
