import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// A signal watcher's registration with its simulated host: what the network fires when it
/// delivers the signal, until the loop removes it (the watcher cancelled, fired once, or the loop
/// shut down). The watcher is held weakly: the loop's registry owns it.
final class SimulatedSignalRegistration: LoopWatchRegistration {
    let signal: Int32
    private(set) weak var watcher: EventLoopWatcher?
    let loop: ObjectIdentifier
    private var isRemoved = false

    init(signal: Int32, watcher: EventLoopWatcher, loop: ObjectIdentifier) {
        self.signal = signal
        self.watcher = watcher
        self.loop = loop
    }

    /// Whether the registration still delivers to a live watcher.
    var isLive: Bool { !isRemoved && watcher != nil }

    func remove() {
        isRemoved = true
        watcher = nil
    }
}

extension SimulatedNetwork {
    /// Sends `signal` to `host` when the network's clock reaches `instant`, as `kill(2)` would send
    /// it to the host's daemon, recording "signal NAME to HOST" in the ``trace``.
    ///
    /// What the host's loops watch with `EventLoop.watch(signal:_:)`, `EventLoop.signal(_:)` or
    /// `TerminationSignals.first(of:on:)` hears it: each watcher of `signal` is called on its
    /// loop, in the order the watchers were registered, as libevent's callback would be. So a
    /// daemon's own signal handling (a graceful shutdown on `SIGTERM`) runs unchanged under the
    /// simulation. A signal nobody on the host watches takes its default action: `SIGCHLD`,
    /// `SIGURG`, `SIGWINCH` and `SIGCONT` are ignored, any other ends the process, which is a
    /// ``crash(_:)`` of the host. A crashed host receives nothing.
    ///
    /// The delivery is an event of the network, like an action of ``schedule(at:named:_:)``:
    /// deliveries due at the same instant run in the order they were scheduled, before the hosts'
    /// loop work due then. No real signal is raised and no handler is installed in the process.
    ///
    /// - Parameters:
    ///   - signal: The signal's number (`SIGTERM`, `SIGINT`...); `SIGSTOP` cannot be simulated
    ///     (a precondition).
    ///   - host: A host of this network.
    ///   - instant: When, on the network's clock; an instant already past means now.
    /// - Returns: A handle that cancels the delivery until it happens.
    @discardableResult
    public func signal(_ signal: Int32, to host: SimulatedHost, at instant: Duration) -> SimulatedScheduledActionHandle
    {
        checkSignal(signal, to: host)
        return schedule(at: instant, named: Self.signalLabel(signal, to: host)) { [self] in
            deliver(signal, to: host)
        }
    }

    /// Sends `signal` to `host` once `delay` has passed on the network's clock; see
    /// ``signal(_:to:at:)``.
    ///
    /// - Parameters:
    ///   - signal: The signal's number; `SIGSTOP` cannot be simulated (a precondition).
    ///   - host: A host of this network.
    ///   - delay: How long from ``now``.
    /// - Returns: A handle that cancels the delivery until it happens.
    @discardableResult
    public func signal(_ signal: Int32, to host: SimulatedHost, after delay: Duration) -> SimulatedScheduledActionHandle
    {
        checkSignal(signal, to: host)
        return schedule(after: delay, named: Self.signalLabel(signal, to: host)) { [self] in
            deliver(signal, to: host)
        }
    }

    // MARK: Registration

    /// Registers `watcher` for `signal` on the host of `loop`; on the loop's thread. Throws
    /// ``EventLoopError/signalsOwnedByAnotherLoop`` when another loop of the host watches signals.
    func watchSignal(
        _ signal: Int32, with watcher: EventLoopWatcher, on loop: EventLoop
    ) throws(EventLoopError) -> SimulatedSignalRegistration {
        let host = self.host(of: loop)
        host.signalWatches.removeAll { !$0.isLive }
        // A host is one process: the first of its loops to watch a signal hears them all, as
        // libevent lets one event_base per process own signal delivery.
        let id = ObjectIdentifier(loop)
        if host.signalWatches.contains(where: { $0.loop != id }) {
            throw EventLoopError.signalsOwnedByAnotherLoop
        }
        let registration = SimulatedSignalRegistration(signal: signal, watcher: watcher, loop: id)
        host.signalWatches.append(registration)
        return registration
    }

    // MARK: Delivery

    /// Signals whose default action is to do nothing (signal(7)); every other one the simulation
    /// delivers ends the process.
    static let signalsIgnoredByDefault: Set<Int32> = [SIGCHLD, SIGURG, SIGWINCH, SIGCONT]

    private func checkSignal(_ signal: Int32, to host: SimulatedHost) {
        precondition(
            hosts.contains { $0 === host }, "SimulatedNetwork.signal(_:to:) needs a host of this network")
        precondition(
            signal > 0 && signal < 65 && signal != SIGSTOP,
            "SimulatedNetwork.signal(_:to:): \(signal) is not a signal the simulation delivers (1...64, not SIGSTOP)")
    }

    /// Runs the watchers of `signal` on `host`, or its default action when none is registered.
    private func deliver(_ signal: Int32, to host: SimulatedHost) {
        guard !host.isCrashed else { return }
        host.signalWatches.removeAll { !$0.isLive }
        let watchers = host.signalWatches.filter { $0.signal == signal }.compactMap(\.watcher)
        if watchers.isEmpty {
            if !Self.signalsIgnoredByDefault.contains(signal) { crash(host) }
            return
        }
        for watcher in watchers { watcher.deliverSignal() }
    }

    /// "signal SIGTERM to server": the trace's line for a delivery.
    private static func signalLabel(_ signal: Int32, to host: SimulatedHost) -> String {
        "signal \(signalName(signal)) to \(host.name)"
    }

    /// The signal's constant name for the common ones, its number otherwise.
    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        case SIGQUIT: "SIGQUIT"
        case SIGKILL: "SIGKILL"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        case SIGPIPE: "SIGPIPE"
        case SIGALRM: "SIGALRM"
        case SIGCHLD: "SIGCHLD"
        default: "signal \(signal)"
        }
    }
}
