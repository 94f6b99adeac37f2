/// An ``EventLoop``'s backend, the libevent case concrete so that the loop's calls on it (the
/// clock read once per tick, the `eventfd` write once per burst of submissions from other
/// threads, the poll and the timer) are direct and inlined rather than through
/// ``EventLoopBackend``'s witness table, as `TCPTransportCarrier` does for a connection's socket.
///
/// Every member forwards the same call to either case: no case does anything of its own, so
/// the loop never learns which backend it has.
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

    var isDrivenExternally: Bool {
        switch self {
        case .libevent(let backend): backend.isDrivenExternally
        case .external(let backend): backend.isDrivenExternally
        }
    }

    func checkCanBeDriven(_ operation: StaticString) {
        switch self {
        case .libevent(let backend): backend.checkCanBeDriven(operation)
        case .external(let backend): backend.checkCanBeDriven(operation)
        }
    }

    var admitsVisitsWhileUndriven: Bool {
        switch self {
        case .libevent(let backend): backend.admitsVisitsWhileUndriven
        case .external(let backend): backend.admitsVisitsWhileUndriven
        }
    }

    func driveWillStart() {
        switch self {
        case .libevent(let backend): backend.driveWillStart()
        case .external(let backend): backend.driveWillStart()
        }
    }

    func driveDidEnd() {
        switch self {
        case .libevent(let backend): backend.driveDidEnd()
        case .external(let backend): backend.driveDidEnd()
        }
    }

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

    // MARK: Monitoring

    var supportsMonitoring: Bool {
        switch self {
        case .libevent(let backend): backend.supportsMonitoring
        case .external(let backend): backend.supportsMonitoring
        }
    }

    // MARK: Watchers

    func addDescriptorWatch(
        _ watcher: EventLoopWatcher, fd: Int32, events: IOEvents, isOneShot: Bool
    )
        throws(EventLoopError) -> any LoopWatchRegistration
    {
        switch self {
        case .libevent(let backend):
            try backend.addDescriptorWatch(watcher, fd: fd, events: events, isOneShot: isOneShot)
        case .external(let backend):
            try backend.addDescriptorWatch(watcher, fd: fd, events: events, isOneShot: isOneShot)
        }
    }

    func addSignalWatch(
        _ watcher: EventLoopWatcher, signal: Int32, isOneShot: Bool, on loop: EventLoop
    )
        throws(EventLoopError) -> any LoopWatchRegistration
    {
        switch self {
        case .libevent(let backend):
            try backend.addSignalWatch(watcher, signal: signal, isOneShot: isOneShot, on: loop)
        case .external(let backend):
            try backend.addSignalWatch(watcher, signal: signal, isOneShot: isOneShot, on: loop)
        }
    }

    // MARK: TCP

    func listenTarget(host: String, port: UInt16) throws(TCPError) -> TCPListenTarget {
        switch self {
        case .libevent(let backend): try backend.listenTarget(host: host, port: port)
        case .external(let backend): try backend.listenTarget(host: host, port: port)
        }
    }

    func bindListener(
        _ target: TCPListenTarget, on loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> Result<TCPListener, TCPError> {
        switch self {
        case .libevent(let backend): backend.bindListener(target, on: loop, options: options, onAccept: onAccept)
        case .external(let backend): backend.bindListener(target, on: loop, options: options, onAccept: onAccept)
        }
    }

    var connectRefusal: TCPError? {
        switch self {
        case .libevent(let backend): backend.connectRefusal
        case .external(let backend): backend.connectRefusal
        }
    }

    func nameResolver(replacing requested: any NameResolver) -> any NameResolver {
        switch self {
        case .libevent(let backend): backend.nameResolver(replacing: requested)
        case .external(let backend): backend.nameResolver(replacing: requested)
        }
    }

    func connect(
        to address: TCPSocketAddress, from loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) -> any TCPConnectAttempt {
        switch self {
        case .libevent(let backend):
            backend.connect(to: address, from: loop, options: options, completion: completion)
        case .external(let backend):
            backend.connect(to: address, from: loop, options: options, completion: completion)
        }
    }

    // MARK: Teardown

    func loopDidShutDown(_ loop: EventLoop) {
        switch self {
        case .libevent(let backend): backend.loopDidShutDown(loop)
        case .external(let backend): backend.loopDidShutDown(loop)
        }
    }

    func loopWasReleased(_ loop: EventLoop, watchers: [EventLoopWatcher]) {
        switch self {
        case .libevent(let backend): backend.loopWasReleased(loop, watchers: watchers)
        case .external(let backend): backend.loopWasReleased(loop, watchers: watchers)
        }
    }
}
