import TomorrowlandLoop

/// A machine on a ``SimulatedNetwork``: a name, an address, and the loops a daemon runs on.
///
/// Give the daemon ``loop`` (or ``group``) where it would otherwise make an `EventLoop()` or an
/// `EventLoopGroup(loopCount:)`: everything it does through the public loop and TCP API
/// (`TCPListener.listen(host:port:on:…)`, `TCPConnection.connect(host:port:on:…)`, reads, writes,
/// timers, `loop.now`) then happens on the simulation, on virtual time.
///
/// A host's loops never run on their own: the network runs them, on the thread that drives it.
/// Their signal watchers hear the signals the network sends the host
/// (``SimulatedNetwork/signal(_:to:at:)``); descriptor watchers are not available on them (a
/// precondition failure says so).
public final class SimulatedHost: @unchecked Sendable {
    // `@unchecked Sendable`: everything mutable is touched only by the simulation's thread.

    /// How a host answers connection attempts.
    public enum IncomingConnections: Sendable, Hashable {
        /// As a kernel does: accepted into a listening port's backlog, refused when no port
        /// listens.
        case answered
        /// Every attempt is refused (`ECONNREFUSED` at the connecting side).
        case refused
        /// Attempts are dropped: the connecting side hears nothing, and times out.
        case unanswered
    }

    /// The host's name, which the simulation's name resolver resolves to ``address``.
    public let name: String
    /// The host's IPv4 address, "10.0.0.1" by default for the first host.
    public let address: String
    /// The host's loops, in creation order: fresh ones after each
    /// ``SimulatedNetwork/restart(_:)``.
    public internal(set) var loops: [EventLoop]
    /// The host's loops as a group (no threads: the simulation drives them); a fresh group after
    /// each ``SimulatedNetwork/restart(_:)``.
    public internal(set) var group: EventLoopGroup
    /// The host's first loop.
    public var loop: EventLoop { loops[0] }
    /// How many times the host restarted (``SimulatedNetwork/restart(_:)``): 0 until its first
    /// restart. Its ``loops`` belong to this generation; those of earlier ones are shut down.
    public internal(set) var generation = 0

    /// The most descriptors the host's daemon may hold, as `ulimit -n` would set it; nil (no
    /// limit) by default. A fault to set by hand.
    ///
    /// What counts: the host's listening ports and its connections (accepted ones, and its own
    /// connects once the peer answered), until they close. At the limit, accepting fails with
    /// `EMFILE` as `accept(2)` does: the connection stays in its port's backlog and the listener
    /// backs off (`TCPListener.resourceBackoff`) before it tries again, so it accepts once the
    /// daemon closed a connection or the limit rose; a new listener fails with
    /// `TCPError.bindFailed(errno: EMFILE)`. A connect from the host is not limited (a
    /// simplification).
    public var descriptorLimit: Int?

    /// How the host answers connection attempts; ``IncomingConnections/answered`` at first. A
    /// fault to set by hand.
    public var incomingConnections = IncomingConnections.answered

    /// Whether the host crashed (``SimulatedNetwork/crash(_:)``): its loops are shut down and its
    /// connections reset; it sends and answers nothing more.
    public internal(set) var isCrashed = false

    /// The ports the host listens on now, in increasing order: a listener's port until it
    /// closes (or the host crashes). A daemon that shut down cleanly leaves none.
    public var listeningPorts: [UInt16] { ports.keys.sorted() }

    /// How many connections the host's code has not closed yet (reset ones included, until the
    /// code closes them too), and connections waiting in a port's backlog. A daemon that shut
    /// down cleanly leaves none.
    public var unreleasedConnectionCount: Int { ends.count }

    /// The index of the host in its network, which fixes the order the simulation visits hosts
    /// in.
    let index: Int
    /// Listening ports by number.
    var ports: [UInt16: SimulatedPort] = [:]
    /// Ends of connections on this host that are not released yet, oldest first (the order a
    /// crash resets them in).
    var ends: [SimulatedLinkEnd] = []
    /// The next ephemeral port to try.
    var nextEphemeralPort: UInt16 = 49152
    /// The network the host is on. Unowned: the network owns its hosts, and what reaches the
    /// network through a host (its ports) lives only while the network does.
    unowned let network: SimulatedNetwork

    init(name: String, address: String, index: Int, loopCount: Int, simulation: SimulatedNetwork) {
        self.name = name
        self.address = address
        self.index = index
        network = simulation
        let loops = (0..<loopCount).map { _ in EventLoop(backend: SimulatedLoopBackend(network: simulation)) }
        self.loops = loops
        group = EventLoopGroup(externallyDrivenLoops: loops)
    }

    /// The fault plan ran the host out of descriptors for a while (``SimulatedFaultPlan``).
    var descriptorsExhaustedByPlan = false

    /// Whether a new descriptor would fail with `EMFILE`.
    var isOutOfDescriptors: Bool {
        if descriptorsExhaustedByPlan { return true }
        guard let descriptorLimit else { return false }
        return descriptorsInUse >= descriptorLimit
    }

    /// How many descriptors the host's daemon holds: listening ports and connections, not those
    /// still waiting in a backlog (the kernel holds them until `accept`).
    var descriptorsInUse: Int {
        ports.count + ends.count - ports.values.reduce(0) { $0 + $1.backlog.count }
    }

    /// The signal watchers of the host's loops, in registration order (dead ones are pruned as
    /// the network meets them).
    var signalWatches: [SimulatedSignalRegistration] = []

    /// A port number no listener and no connection of this host uses.
    func ephemeralPort() -> UInt16 {
        while true {
            let port = nextEphemeralPort
            nextEphemeralPort = nextEphemeralPort == UInt16.max ? 49152 : nextEphemeralPort + 1
            if ports[port] == nil && !ends.contains(where: { $0.localPort == port }) { return port }
        }
    }
}
