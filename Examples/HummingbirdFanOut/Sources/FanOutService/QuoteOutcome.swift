/// How a `GET /quote` was answered: the `outcome` dimension of `fanout_quotes_total`.
public enum QuoteOutcome: String, Sendable, CaseIterable {
    /// 200: both backends answered in time.
    case quoted
    /// 504: the deadline passed first.
    case timedOut = "timed_out"
    /// 502: a backend failed.
    case backendFailed = "backend_failed"
    /// 499: the client hung up first (nobody reads the answer).
    case clientClosed = "client_closed"
    /// 400: a parameter could not be read; no backend was called.
    case badRequest = "bad_request"
}
