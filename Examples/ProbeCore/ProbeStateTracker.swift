import Foundation

/// A change of an endpoint's state, as the daemon logs it.
public struct ProbeTransition: Sendable, Equatable {
    /// The endpoint whose state changed.
    public let endpoint: ProbeEndpoint
    /// Whether it was up before; nil for its first observation.
    public let wasUp: Bool?
    /// What the round found.
    public let status: ProbeStatus

    /// A transition from its parts.
    public init(endpoint: ProbeEndpoint, wasUp: Bool?, status: ProbeStatus) {
        self.endpoint = endpoint
        self.wasUp = wasUp
        self.status = status
    }

    /// The log line: "127.0.0.1:80 is up (latency 0.25 ms)", "127.0.0.1:81 went down: connect
    /// failed (ECONNREFUSED)", "... is back up (latency ...)".
    public var message: String {
        switch (wasUp, status) {
        case (nil, .up(let latency)): "\(endpoint) is up (latency \(formatLatency(latency)))"
        case (nil, .down(let failure)): "\(endpoint) is down: \(failure)"
        case (_, .up(let latency)): "\(endpoint) is back up (latency \(formatLatency(latency)))"
        case (_, .down(let failure)): "\(endpoint) went down: \(failure)"
        }
    }
}

/// Remembers whether each endpoint is up and reports only changes. A value type without I/O.
public struct ProbeStateTracker: Sendable {
    private var isUp: [ProbeEndpoint: Bool] = [:]

    /// An empty tracker: every endpoint's first status is a change.
    public init() {}

    /// Whether `endpoint` was up at its last observation; nil if never observed.
    public func state(of endpoint: ProbeEndpoint) -> Bool? {
        isUp[endpoint]
    }

    /// Records `status` for `endpoint` and returns the transition, or nil if its state (up or
    /// down) did not change.
    public mutating func record(_ status: ProbeStatus, for endpoint: ProbeEndpoint) -> ProbeTransition? {
        let previous = isUp[endpoint]
        isUp[endpoint] = status.isUp
        if previous == status.isUp { return nil }
        return ProbeTransition(endpoint: endpoint, wasUp: previous, status: status)
    }
}

/// "0.25 ms", "12.40 ms", "1.500 s".
public func formatLatency(_ latency: Duration) -> String {
    let (seconds, attoseconds) = latency.components
    let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
    if milliseconds >= 1000 {
        return String(format: "%.3f s", milliseconds / 1000)
    }
    return String(format: "%.2f ms", milliseconds)
}
