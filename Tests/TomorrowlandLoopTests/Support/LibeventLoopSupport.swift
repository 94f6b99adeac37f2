@testable import TomorrowlandLoop

extension EventLoop {
    /// The backend of a loop made with `EventLoop()` or `EventLoop(borrowing:)`, for tests that
    /// look at its libevent objects.
    var libeventBackend: LibeventBackend {
        guard case .libevent(let backend) = backend else {
            preconditionFailure("libeventBackend: the loop has another backend")
        }
        return backend
    }
}

extension TCPConnection {
    /// Wraps connected socket `fd` and registers it with `loop`, a libevent loop; on the loop's
    /// thread.
    convenience init(fd: Int32, loop: EventLoop, options: TCPConnectionOptions, remote: TCPSocketAddress?) {
        self.init(
            transport: TCPSocketTransport(fd: fd, base: loop.libeventBackend.base, options: options, remote: remote),
            loop: loop, options: options)
    }
}
