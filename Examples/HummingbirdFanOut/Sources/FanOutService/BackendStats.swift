import Hummingbird

/// `GET /stats`: how many calls of each backend started, completed, failed and were cancelled.
public struct BackendStats: Sendable, Codable, Equatable, ResponseEncodable {
    /// Counts per backend name, then per event kind (`"cancelled": 2`).
    public var backends: [String: [String: Int]]

    /// The counts in `log` for the named backends.
    public init(log: BackendCallLog, backends names: [String]) {
        var backends: [String: [String: Int]] = [:]
        for name in names {
            var counts: [String: Int] = [:]
            for kind in BackendEvent.Kind.allCases {
                counts[kind.rawValue] = log.count(backend: name, kind: kind)
            }
            backends[name] = counts
        }
        self.backends = backends
    }
}
