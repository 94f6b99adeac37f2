/// What drives a simulated host's ``EventLoop`` and carries its TCP: the loop side of the seam
/// that module TomorrowlandSimulation implements.
///
/// A loop made with ``EventLoop/init(simulation:)`` has no `event_base`, no `eventfd` and no
/// thread. It reads its clock here (``clock``), and its TCP entry points
/// (``TCPListener/listen(host:port:on:options:onAccept:)``, ``TCPListener/bind(host:port:on:options:onAccept:)``,
/// ``TCPConnection/connect(host:port:on:timeout:options:nameResolver:)``) ask it for an acceptor
/// or a connection attempt instead of opening sockets. The simulation runs the loop's ticks with
/// ``EventLoop/withCallbackEntered(_:)`` when it picks the loop's next event, and calls transports'
/// readiness the same way, all on one thread.
package protocol EventLoopSimulation: AnyObject, Sendable {
    /// The virtual clock; every simulated loop reads the same one.
    var clock: VirtualClock { get }

    /// Binds a listening port on the host of `loop` and makes its ``TCPListener``; on the loop's
    /// thread. Fails with ``TCPError/bindFailed(errno:)`` (`EADDRINUSE`, `EADDRNOTAVAIL`) as a
    /// kernel would, or ``TCPError/closed`` once the loop shuts down.
    func bindListener(
        host: String, port: UInt16, on loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> Result<TCPListener, TCPError>

    /// Starts connecting from the host of `loop` to `address`; on the loop's thread. `completion`
    /// runs later, once, as a callback of the loop, with the transport of the established
    /// connection or the error (``TCPError/connectFailed(errno:)`` with `ECONNREFUSED`...),
    /// unless the attempt is cancelled first.
    func connect(
        to address: TCPSocketAddress, from loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) -> any TCPConnectAttempt

    /// The resolver names go through on this simulation's hosts, used where a connect names the
    /// system's resolver.
    var nameResolver: any NameResolver { get }

    /// Registers `watcher` for `signal` on the host of `loop`; on the loop's thread. The
    /// simulation fires it (``EventLoopWatcher/fire(_:)``) when it delivers `signal` to the host,
    /// until the watcher is cancelled or removed. Throws
    /// ``EventLoopError/signalsOwnedByAnotherLoop`` when another loop of the host watches
    /// signals: a host is one process, and a process's signals reach one loop.
    func watchSignal(_ signal: Int32, with watcher: EventLoopWatcher, on loop: EventLoop) throws(EventLoopError)

    /// Work or a timer was submitted to `loop` from outside its own work (another loop's, or
    /// another thread): the simulation must ask the loop for its next event time again. Called
    /// from any thread, after the submission, with no lock held.
    func loopWasWoken(_ loop: EventLoop)
}

/// A connection attempt in progress on a simulated network.
package protocol TCPConnectAttempt: AnyObject {
    /// Abandons the attempt: its completion never runs, and a connection the peer already
    /// accepted is reset.
    func cancel()
}
