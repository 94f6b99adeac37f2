/// Why an ``EventLoop`` refused a request.
public enum EventLoopError: Error, Sendable, Hashable {
    /// The loop was shut down (``EventLoop/shutdown()``), or shut down before the request
    /// completed: a watcher or a promise form waiting on the loop ends with this error.
    case shutDown
    /// The file descriptor is not open (`EBADF`), or cannot be watched for readiness (for example
    /// a regular file, which `epoll` refuses). `errno` is the error the system reported.
    case invalidDescriptor(fd: Int32, errno: Int32)
    /// The signal number is not one a watcher can be installed for.
    case invalidSignal(Int32)
    /// Another loop in this process already watches signals. libevent delivers signals to one
    /// `event_base` per process; watch every signal on the same loop.
    case signalsOwnedByAnotherLoop
    /// libevent refused the registration (`event_new` or `event_add` failed).
    case libeventFailure(operation: String)
}
