import TomorrowlandLoop

extension SimulatedNetwork {
    /// Names that resolve badly, by name: late, never, or to a dead address; empty by default.
    /// A fault to set by hand (``faultPlan`` draws its own for other names).
    ///
    /// Every resolution of a name listed here meets its fault, and is recorded in the trace and
    /// counted. A name not listed resolves as usual: a host's name to its address after a
    /// latency, anything else fails with `TCPError.addressResolutionFailed(host:)`.
    public var nameFaults: [String: SimulatedNameFault] {
        get { faultState.nameFaults }
        set { faultState.nameFaults = newValue }
    }

    /// Answers `resolution` with a fault, one set by hand or drawn by the plan; false when it
    /// meets none and resolves as usual.
    func resolveWithFault(_ resolution: NameResolution) -> Bool {
        guard let fault = faultState.nameFaults[resolution.host] ?? drawNameFault() else { return false }
        let name = resolution.host
        switch fault {
        case .late(let delay):
            recordFault("name \(name) resolves \(delay.simulationNanoseconds)ns late")
            let answer: Result<[TCPSocketAddress], TCPError>
            if let host = hosts.first(where: { $0.name == name }),
                let address = TCPSocketAddress(ipAddress: host.address, port: resolution.port)
            {
                answer = .success([address])
            } else {
                answer = .failure(.addressResolutionFailed(host: name))
            }
            schedule(.resolved(resolution, answer), after: latency.draw(&random) &+ delay.simulationNanoseconds)
        case .never:
            // Left unanswered: the connect abandons it at its timeout.
            recordFault("name \(name) never resolves")
        case .address(let ip):
            recordFault("name \(name) resolves to \(ip)")
            let answer: Result<[TCPSocketAddress], TCPError> =
                TCPSocketAddress(ipAddress: ip, port: resolution.port).map { .success([$0]) }
                ?? .failure(.addressResolutionFailed(host: name))
            schedule(.resolved(resolution, answer), after: latency.draw(&random))
        }
        return true
    }

    /// The plan's fault for one resolution, if it draws one.
    private func drawNameFault() -> SimulatedNameFault? {
        let plan = faultState.plan
        guard plan.nameFaultProbability > 0, random.chance(plan.nameFaultProbability) else { return nil }
        switch random.number(in: 0...2) {
        case 0:
            return .late(.nanoseconds(Int64(clamping: random.number(in: plan.lateNameDelay.simulationNanoseconds))))
        case 1:
            return .never
        default:
            return .address(deadAddress())
        }
    }

    /// An address no host has: the first free one of 192.0.2.0/24, the range RFC 5737 keeps
    /// for documentation.
    private func deadAddress() -> String {
        for last in 1...254 {
            let address = "192.0.2.\(last)"
            if host(at: address) == nil { return address }
        }
        preconditionFailure("SimulatedNetwork: every address of 192.0.2.0/24 is a host's")
    }
}

extension SimulationRandom {
    /// True with probability `probability` (0 never, 1 always), to 53 bits.
    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(UInt64(1) << 53) < probability
    }
}

extension ClosedRange<Duration> {
    /// The bounds in nanoseconds, for drawing.
    var simulationNanoseconds: ClosedRange<UInt64> {
        lowerBound.simulationNanoseconds...upperBound.simulationNanoseconds
    }
}
