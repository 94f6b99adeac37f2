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
