/// What the model allows as the reply to one command: one reply, or (DBSIZE) any count in a
/// range.
public enum ModelExpectation: Hashable, Sendable, CustomStringConvertible {
    /// Exactly this reply.
    case exactly(ModelReply)
    /// An integer reply within these bounds.
    case integer(in: ClosedRange<Int>)

    /// Whether `reply` is one the model allows.
    public func accepts(_ reply: ModelReply) -> Bool {
        switch self {
        case .exactly(let expected): return reply == expected
        case .integer(let range):
            guard case .integer(let value) = reply else { return false }
            return range.contains(value)
        }
    }

    /// The expectation as a failure message shows it.
    public var description: String {
        switch self {
        case .exactly(let reply): reply.description
        case .integer(let range): ":\(range.lowerBound)...\(range.upperBound)"
        }
    }
}
