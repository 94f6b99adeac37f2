import TomorrowlandLoop

extension SimulatedNetwork {
    /// Called after a host crashes (by ``crash(_:)``, or by ``faultPlan``), with the host; nil by
    /// default.
    ///
    /// The host's loops are shut down and its connections reset by then: whatever a daemon kept
    /// in memory there is gone. A checker learns here that a crash lost state (a model of the
    /// daemon's data starts over). Runs on the network's thread; it must not drive the network.
    public var onHostCrash: ((SimulatedHost) -> Void)? {
        get { faultState.onHostCrash }
        set { faultState.onHostCrash = newValue }
    }

    /// Called after a crashed host restarts (by ``restart(_:)``, or by ``faultPlan``), with the
    /// host; nil by default.
    ///
    /// Start the daemon again here, on the host's fresh loops (``SimulatedHost/loop``,
    /// ``SimulatedHost/group``): nothing of the old one survived. Without it, a host the fault
    /// plan restarts comes back up with nothing listening, and connects to it are refused. Runs
    /// on the network's thread, outside every loop; it must not drive the network.
    public var onHostRestart: ((SimulatedHost) -> Void)? {
        get { faultState.onHostRestart }
        set { faultState.onHostRestart = newValue }
    }

    /// Restarts a crashed host with fresh loops, with the same name and address, and returns
    /// their group; then calls ``onHostRestart``.
    ///
    /// The host answers connection attempts again (``SimulatedHost/incomingConnections`` is
    /// ``SimulatedHost/IncomingConnections/answered``), with nothing listening until a daemon
    /// listens on the new loops; its ``SimulatedHost/generation`` goes up by one. The loops of
    /// the earlier generation stay shut down: work sent to them does not run, and a listener or a
    /// connect on them fails with `TCPError.closed`. Segments still in flight to the connections
    /// it had before the crash find them reset. Its ``SimulatedHost/descriptorLimit`` is kept.
    ///
    /// Call it on the thread that drives the network, outside every loop's work; to restart at an
    /// exact instant, call it from ``schedule(at:named:_:)``.
    ///
    /// - Parameter host: A host of this network that crashed (a precondition).
    /// - Returns: The host's new loops, as a group (also ``SimulatedHost/group``).
    @discardableResult
    public func restart(_ host: SimulatedHost) -> EventLoopGroup {
        precondition(
            hosts.contains { $0 === host }, "SimulatedNetwork.restart(_:) needs a host of this network")
        precondition(host.isCrashed, "SimulatedNetwork.restart(_:) restarts a crashed host: crash(_:) it first")
        host.generation += 1
        record(.restart, "\(host.name) generation \(host.generation)")
        let loops = (0..<host.loops.count).map { _ in EventLoop(backend: SimulatedLoopBackend(network: self)) }
        host.loops = loops
        host.group = EventLoopGroup(externallyDrivenLoops: loops)
        for loop in loops { hostsByLoop[ObjectIdentifier(loop)] = host }
        // The event picker asks only the loops it knows: the fresh ones join it here.
        loopSchedule.add(host)
        // Every connection it had was reset by the crash: none is the new daemon's.
        host.ends.removeAll()
        host.ports.removeAll()
        host.signalWatches.removeAll()
        host.descriptorsExhaustedByPlan = false
        host.incomingConnections = .answered
        host.isCrashed = false
        faultState.onHostRestart?(host)
        return host.group
    }
}
