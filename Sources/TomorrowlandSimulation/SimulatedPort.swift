import TomorrowlandLoop

/// A listening port of a simulated host: the ``TCPAcceptor`` under a `TCPListener` on the
/// simulation.
///
/// Incoming connections wait in a backlog until the listener takes them, which it does while
/// accepting is enabled. The backlog holds what Linux's accept queue holds for the listener's
/// backlog option: `backlog + 1` connections, the option capped at `somaxconn` (4096). An attempt
/// beyond that is dropped, as Linux drops its SYN, and the connecting host sends it again after
/// its retransmission timeout (1 s, doubling), so it gets in once there is room or times out.
final class SimulatedPort: TCPAcceptor {
    let host: SimulatedHost
    let port: UInt16
    let loop: EventLoop
    /// How many established connections the backlog holds.
    let backlogLimit: Int
    /// The addresses the port answers on.
    let binding: SimulatedBinding
    weak var listener: TCPListener?
    /// Established server ends waiting for the listener, oldest first.
    var backlog: [SimulatedLinkEnd] = []
    var isAccepting = false
    var isClosed = false
    /// Whether an accept event is queued in the network.
    var acceptScheduled = false

    /// Linux's `somaxconn` default: the cap on a listener's backlog.
    static let maximumBacklog = 4096

    init(host: SimulatedHost, port: UInt16, loop: EventLoop, backlog: Int, binding: SimulatedBinding) {
        self.host = host
        self.port = port
        self.loop = loop
        self.binding = binding
        // Linux: `listen` caps the backlog at somaxconn (a negative one, taken unsigned, too), and
        // the accept queue is full only once it holds more than that.
        let capped = backlog < 0 ? Self.maximumBacklog : min(backlog, Self.maximumBacklog)
        backlogLimit = capped + 1
    }

    func attach(to listener: TCPListener) {
        self.listener = listener
        isAccepting = true
    }

    func setAccepting(_ enabled: Bool) {
        isAccepting = enabled
        if enabled { host.network.scheduleAccept(self) }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        isAccepting = false
        if host.ports[port] === self { host.ports[port] = nil }
        // Connections still in the backlog were never accepted: the kernel resets them, and they
        // are no descriptors of the host's (`SimulatedHost.descriptorsInUse`).
        let waiting = backlog
        backlog = []
        for end in waiting {
            host.network.abort(end, reason: "backlog of closed port \(port)")
            host.ends.removeAll { $0 === end }
        }
    }
}
