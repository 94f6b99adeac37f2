/// The addresses a simulated listening port answers on, from the host it was given.
enum SimulatedBinding {
    /// "", "*", "0.0.0.0": the host's address and 127.0.0.1.
    case everyIPv4Address
    /// "::": IPv6 only, as a real listener on "::" is (`IPV6_V6ONLY`): ::1.
    case everyIPv6Address
    /// "127.0.0.1", "localhost": connections from the host itself.
    case ipv4Loopback
    /// "::1".
    case ipv6Loopback
    /// The host's name or address: connections to that address only.
    case hostAddress

    /// The binding for a listener's `host` on `simulatedHost`, nil if it is not one of the
    /// host's addresses.
    init?(host: String, on simulatedHost: SimulatedHost) {
        switch host {
        case "", "*", "0.0.0.0": self = .everyIPv4Address
        case "::": self = .everyIPv6Address
        // A real listener binds the first address "localhost" resolves to that binds: 127.0.0.1
        // (see `SimulatedNetwork.loopbackName`).
        case "127.0.0.1", SimulatedNetwork.loopbackName: self = .ipv4Loopback
        case "::1": self = .ipv6Loopback
        case simulatedHost.name, simulatedHost.address: self = .hostAddress
        default: return nil
        }
    }

    /// Whether a connection to `destination` reaches a port with this binding: one of
    /// ``SimulatedDestination``'s kinds.
    func answers(_ destination: SimulatedDestination) -> Bool {
        switch (self, destination) {
        case (.everyIPv4Address, .hostAddress), (.everyIPv4Address, .ipv4Loopback): true
        case (.everyIPv6Address, .ipv6Loopback): true
        case (.ipv4Loopback, .ipv4Loopback), (.ipv6Loopback, .ipv6Loopback): true
        case (.hostAddress, .hostAddress): true
        default: false
        }
    }
}

/// Which of a host's addresses a connection attempt is for.
enum SimulatedDestination {
    /// The host's own address, from any host.
    case hostAddress
    /// 127.0.0.1, from the host itself.
    case ipv4Loopback
    /// ::1, from the host itself.
    case ipv6Loopback
}
