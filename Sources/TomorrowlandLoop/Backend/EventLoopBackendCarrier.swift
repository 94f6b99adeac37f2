/// An ``EventLoop``'s backend, the libevent case concrete so that the loop's calls on it (the
/// clock read once per tick, the `eventfd` write once per burst of submissions from other
/// threads, the poll and the timer) are direct and inlined rather than through
/// ``EventLoopBackend``'s witness table, as `TCPTransportCarrier` does for a connection's socket.
///
/// Only the calls made per tick or per submission are members here, each forwarding the same
/// call to either case; the rest (set-up, watchers, TCP, teardown: once per loop, watcher or
/// connection, where a direct call gains nothing) go through ``dynamic``. No case does anything
/// of its own, so the loop never learns which backend it has.
enum EventLoopBackendCarrier {
    case libevent(LibeventBackend)
    case external(any EventLoopBackend)

    // MARK: Clock and wake-ups

    @inline(__always)
    var now: UInt64 {
        switch self {
        case .libevent(let backend): backend.now
        case .external(let backend): backend.now
        }
    }

    @inline(__always)
    func wakeUp(_ loop: EventLoop) {
        switch self {
        case .libevent(let backend): backend.wakeUp(loop)
        case .external(let backend): backend.wakeUp(loop)
        }
    }

    // MARK: Driving

    @inline(__always)
    func poll(blocking: Bool) {
        switch self {
        case .libevent(let backend): backend.poll(blocking: blocking)
        case .external(let backend): backend.poll(blocking: blocking)
        }
    }

    @inline(__always)
    func armTimer(for deadline: UInt64?) {
        switch self {
        case .libevent(let backend): backend.armTimer(for: deadline)
        case .external(let backend): backend.armTimer(for: deadline)
        }
    }

    @inline(__always)
    func requestAnotherTurn() {
        switch self {
        case .libevent(let backend): backend.requestAnotherTurn()
        case .external(let backend): backend.requestAnotherTurn()
        }
    }

    // MARK: Everything else

    /// The backend through ``EventLoopBackend``'s witness table, for the calls that are not made
    /// per tick or per submission.
    var dynamic: any EventLoopBackend {
        switch self {
        case .libevent(let backend): backend
        case .external(let backend): backend
        }
    }
}
