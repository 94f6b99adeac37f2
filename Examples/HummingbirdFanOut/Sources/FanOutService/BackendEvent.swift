/// One thing that happened to one backend call, as ``BackendCallLog`` records it.
public struct BackendEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The call started: its timer is armed on the request's loop.
        case started
        /// The call answered.
        case completed
        /// The call answered with an error.
        case failed
        /// The call's cancel handler ran: its timer was cancelled before it fired.
        case cancelled
    }

    /// The backend's name.
    public var backend: String
    /// The item the call was about.
    public var item: String
    /// What happened.
    public var kind: Kind

    /// Makes an event.
    public init(backend: String, item: String, kind: Kind) {
        self.backend = backend
        self.item = item
        self.kind = kind
    }

    /// `"pricing cancelled (widget)"`: the form of the service's log lines.
    public var description: String { "\(backend) \(kind.rawValue) (\(item))" }
}
