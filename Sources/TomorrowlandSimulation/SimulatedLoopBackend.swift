import TomorrowlandLoop

/// The backend of a simulated host's loop: the network's virtual clock, its port table and its
/// links instead of an `event_base`, an `eventfd` and sockets.
///
/// The network drives the loop (``SimulatedNetwork`` runs its turns and callbacks on the thread
/// that drives the network), so the loop's own driving calls and descriptor watchers are
/// precondition failures: a real descriptor would make a run depend on the kernel, and it could
/// not replay from its seed. Signal watchers register with the host, which hears the signals the
/// network sends it (``SimulatedNetwork/signal(_:to:at:)``). Monitoring measures nothing on
/// virtual time.
final class SimulatedLoopBackend: EventLoopBackend {
    /// Weak: the network owns its hosts' loops, and a strong reference back made every simulated
    /// network, with its hosts, loops and everything in flight, a cycle that was never freed.
    /// Once it is gone the loop connects and binds nothing (``TCPError/closed``).
    private weak let network: SimulatedNetwork?
    /// The network's clock, which every loop of it reads (from any thread: it is atomic).
    private let clock: VirtualClock

    init(network: SimulatedNetwork) {
        self.network = network
        clock = network.clock
    }

    /// Why a simulated loop refuses descriptor watchers.
    static let watcherMessage =
        "EventLoop: descriptor watchers are not available on a simulated host's loop (it has no event_base, and a real descriptor would make the run depend on the kernel); use the simulated network's TCP"

    // MARK: Clock and wake-ups

    var now: UInt64 { clock.nanoseconds }

    /// One thread drives every simulated loop, so nothing waits to be woken: the network only
    /// learns that this loop's next event time may be sooner.
    func wakeUp(_ loop: EventLoop) {
        network?.loopWasWoken(loop)
    }

    // MARK: Driving

    var isDrivenExternally: Bool { true }

    func checkCanBeDriven(_ operation: StaticString) {
        preconditionFailure(
            "EventLoop.\(operation) called on a simulated host's loop; the simulation drives its loops: run the SimulatedNetwork instead"
        )
    }

    /// False: a visit from another thread would run the loop outside the network's order.
    var admitsVisitsWhileUndriven: Bool { false }

    /// Never called: ``checkCanBeDriven(_:)`` refuses every drive.
    func driveWillStart() {}

    /// Never called: ``checkCanBeDriven(_:)`` refuses every drive.
    func driveDidEnd() {}

    /// Never called: ``checkCanBeDriven(_:)`` refuses every drive.
    func poll(blocking: Bool) {}

    /// Nothing to arm: the network asks the loop for its next event time after each turn and
    /// callback.
    func armTimer(for deadline: UInt64?) {}

    /// Nothing to ask: the network asks the loop again after each turn and callback.
    func requestAnotherTurn() {}

    // MARK: Monitoring

    var supportsMonitoring: Bool { false }

    // MARK: Watchers

    func addDescriptorWatch(
        _ watcher: EventLoopWatcher, fd: Int32, events: IOEvents, isOneShot: Bool
    )
        throws(EventLoopError) -> any LoopWatchRegistration
    {
        preconditionFailure(Self.watcherMessage)
    }

    func addSignalWatch(
        _ watcher: EventLoopWatcher, signal: Int32, isOneShot: Bool, on loop: EventLoop
    )
        throws(EventLoopError) -> any LoopWatchRegistration
    {
        // The host delivers its signals at the instants the run chooses; no real handler is
        // installed.
        guard let network else { throw .shutDown }
        return try network.watchSignal(signal, with: watcher, on: loop)
    }

    // MARK: TCP

    /// A simulated host binds in the network's port table: nothing to resolve. Fails with
    /// ``TCPError/closed`` once the network is gone, before the hop to a loop nothing drives.
    func listenTarget(host: String, port: UInt16) throws(TCPError) -> TCPListenTarget {
        guard network != nil else { throw .closed }
        return TCPListenTarget(host: host, port: port)
    }

    func bindListener(
        _ target: TCPListenTarget, on loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> Result<TCPListener, TCPError> {
        guard let network else { return .failure(.closed) }
        return network.bindListener(
            host: target.host, port: target.port, on: loop, options: options, onAccept: onAccept)
    }

    var connectRefusal: TCPError? { network == nil ? .closed : nil }

    /// The network's resolver where the connect named the system's; the caller's own otherwise.
    func nameResolver(replacing requested: any NameResolver) -> any NameResolver {
        guard requested is SystemNameResolver else { return requested }
        guard let network else { return NetworkGoneResolver() }
        return network.nameResolver
    }

    func connect(
        to address: TCPSocketAddress, from loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) -> any TCPConnectAttempt {
        guard let network else {
            completion(.failure(.closed))
            return NetworkGoneConnectAttempt()
        }
        return network.connect(to: address, from: loop, options: options, completion: completion)
    }

    // MARK: Teardown

    /// Nothing to free: the loop's ports and links are the network's, and closed by the loop's
    /// resources.
    func loopDidShutDown(_ loop: EventLoop) {}

    /// Nothing to free or hand over: a signal registration of a watcher that is gone is dropped
    /// the next time the host looks at its watchers.
    func loopWasReleased(_ loop: EventLoop, watchers: [EventLoopWatcher]) {}
}

/// What a connect resolves through once its network is gone: every name fails as the connect
/// would.
private struct NetworkGoneResolver: NameResolver {
    func resolve(_ resolution: NameResolution) {
        _ = resolution.complete(with: .failure(.closed))
    }
}

/// The attempt of a connect made once its network is gone: it failed inside the call.
private final class NetworkGoneConnectAttempt: TCPConnectAttempt {
    var isPending: Bool { false }

    func cancel() {}
}
