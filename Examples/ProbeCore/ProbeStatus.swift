import TomorrowlandLoop

/// Why a probe failed.
public enum ProbeFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connection attempt failed.
    case tcp(TCPError)
    /// The attempt did not finish within the connect timeout.
    case timedOut
    /// The attempt was cancelled by something other than the scheduler.
    case cancelled

    /// A short reason for logs: "connection refused", "timed out"...
    public var description: String {
        switch self {
        case .timedOut, .tcp(.timedOut): "timed out"
        case .cancelled: "cancelled"
        case .tcp(.connectFailed(let code)): "connect failed (\(errnoName(code)))"
        case .tcp(.addressResolutionFailed(let host)): "cannot resolve \(host)"
        case .tcp(let error): "\(error)"
        }
    }
}

/// The outcome of probing one endpoint in one round (after retries).
public enum ProbeStatus: Sendable, Equatable {
    /// Connected; `latency` is the time the successful attempt took.
    case up(latency: Duration)
    /// Every attempt failed; `failure` is the last attempt's.
    case down(ProbeFailure)

    /// Whether this is ``up(latency:)``.
    public var isUp: Bool {
        if case .up = self { return true }
        return false
    }
}

/// The name of common connect errors, for readable logs.
func errnoName(_ code: Int32) -> String {
    switch code {
    case 111: "ECONNREFUSED"
    case 101: "ENETUNREACH"
    case 113: "EHOSTUNREACH"
    case 110: "ETIMEDOUT"
    case 104: "ECONNRESET"
    default: "errno \(code)"
    }
}
