/// The result of a promise: a value, an error, or cancellation.
public enum PromiseResult<Value, Error> {
    /// The promise was fulfilled with a value.
    case value(Value)
    /// The promise was rejected with an error.
    case error(Error)
    /// The promise was cancelled.
    case cancelled

    /// The value, if the result is `.value`.
    public var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// The error, if the result is `.error`.
    public var error: Error? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// Whether the result is `.cancelled`.
    public var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// Maps a `.value` through `transform`; errors and cancellation pass through.
    public func map<T>(_ transform: (Value) throws -> T) rethrows -> PromiseResult<T, Error> {
        switch self {
        case .value(let value): return .value(try transform(value))
        case .error(let error): return .error(error)
        case .cancelled: return .cancelled
        }
    }

    /// Maps an `.error` through `transform`; values and cancellation pass through.
    public func mapError<E>(_ transform: (Error) throws -> E) rethrows -> PromiseResult<Value, E> {
        switch self {
        case .value(let value): return .value(value)
        case .error(let error): return .error(try transform(error))
        case .cancelled: return .cancelled
        }
    }

    /// Replaces a `.value` with the result `transform` returns; errors and cancellation pass through.
    public func flatMap<T>(_ transform: (Value) throws -> PromiseResult<T, Error>) rethrows -> PromiseResult<T, Error> {
        switch self {
        case .value(let value): return try transform(value)
        case .error(let error): return .error(error)
        case .cancelled: return .cancelled
        }
    }

    /// Replaces an `.error` with the result `transform` returns; values and cancellation pass through.
    public func flatMapError<E>(_ transform: (Error) throws -> PromiseResult<Value, E>) rethrows -> PromiseResult<Value, E> {
        switch self {
        case .value(let value): return .value(value)
        case .error(let error): return try transform(error)
        case .cancelled: return .cancelled
        }
    }
}

extension PromiseResult: Sendable where Value: Sendable, Error: Sendable {}

extension PromiseResult: Equatable where Value: Equatable, Error: Equatable {
    /// Results are equal when they are the same case with equal payloads.
    public static func == (lhs: PromiseResult, rhs: PromiseResult) -> Bool {
        switch (lhs, rhs) {
        case let (.value(a), .value(b)): return a == b
        case let (.error(a), .error(b)): return a == b
        case (.cancelled, .cancelled): return true
        default: return false
        }
    }

    /// Results are unequal when they differ in case or payload.
    public static func != (lhs: PromiseResult, rhs: PromiseResult) -> Bool {
        !(lhs == rhs)
    }
}

extension PromiseResult: Hashable where Value: Hashable, Error: Hashable {
    /// Hashes a case discriminator (0 value, 1 error, 2 cancelled), then the payload.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .value(let value):
            hasher.combine(0)
            hasher.combine(value)
        case .error(let error):
            hasher.combine(1)
            hasher.combine(error)
        case .cancelled:
            hasher.combine(2)
        }
    }
}

extension PromiseResult where Error: Swift.Error {
    /// Converts a `Swift.Result`: `.success` becomes `.value`, `.failure` becomes `.error`.
    public init(_ result: Result<Value, Error>) {
        switch result {
        case .success(let value): self = .value(value)
        case .failure(let error): self = .error(error)
        }
    }
}

private enum PromiseResultCodingKeys: String, CodingKey {
    case value
    case error
}

extension PromiseResult: Encodable where Value: Encodable, Error: Encodable {
    /// Encodes as a keyed container with both `value` and `error` keys, the absent one as null.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PromiseResultCodingKeys.self)
        switch self {
        case .value(let value):
            try container.encode(value, forKey: .value)
            try container.encodeNil(forKey: .error)
        case .error(let error):
            try container.encodeNil(forKey: .value)
            try container.encode(error, forKey: .error)
        case .cancelled:
            try container.encodeNil(forKey: .value)
            try container.encodeNil(forKey: .error)
        }
    }
}

extension PromiseResult: Decodable where Value: Decodable, Error: Decodable {
    /// Decodes the format ``encode(to:)`` writes: a non-null `value`, else a non-null `error`,
    /// else `.cancelled`. Both keys must be present.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: PromiseResultCodingKeys.self)
        if let value = try container.decode(Value?.self, forKey: .value) {
            self = .value(value)
        } else if let error = try container.decode(Error?.self, forKey: .error) {
            self = .error(error)
        } else {
            self = .cancelled
        }
    }
}
