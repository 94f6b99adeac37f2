/// Why a backend call failed.
public enum BackendError: Error, Sendable, Equatable {
    /// The backend answered with an error (the request asked it to, with `fail=<backend>`).
    case failed(backend: String)
}
