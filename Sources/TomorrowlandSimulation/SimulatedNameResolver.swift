import TomorrowlandLoop

/// The name resolver of a simulated network's hosts: a host's name resolves to its address,
/// after a latency drawn like a segment's; any other name fails with
/// `TCPError.addressResolutionFailed(host:)`.
///
/// A connect on a simulated host uses it when the caller names no resolver of its own.
final class SimulatedNameResolver: NameResolver, @unchecked Sendable {
    // `@unchecked Sendable`: used only on the simulation's thread, like the network.
    unowned let network: SimulatedNetwork

    init(network: SimulatedNetwork) {
        self.network = network
    }

    func resolve(_ resolution: NameResolution) {
        network.scheduleResolution(resolution)
    }
}

extension SimulatedNetwork {
    /// The two hosts a segment travels between (nil for events within one host), for
    /// partitions.
    func hostPair(of action: SimulationEvent.Action) -> HostPair? {
        switch action {
        case .syn(let attempt, let ip, _):
            guard let server = host(at: ip) else { return nil }
            return HostPair(attempt.host, server)
        case .established(let attempt, let end):
            guard let server = end.peer?.host else { return nil }
            return HostPair(attempt.host, server)
        case .data(let end, _), .endOfOutput(let end), .windowUpdate(let end, _), .reset(let end):
            guard let sender = end.peer?.host else { return nil }
            return HostPair(end.host, sender)
        case .refused(let attempt):
            // The refusal travels back from the host the attempt went to; a partition that
            // started meanwhile holds it like any segment.
            _ = attempt
            return nil
        case .readable, .writable, .accept, .resolved:
            return nil
        }
    }
}
