import TomorrowlandLoop

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
        case .refused:
            // A simplification: the refusal does not name the host it comes from, so one already
            // in flight when a partition starts still arrives.
            return nil
        case .readable, .writable, .accept, .resolved, .flushHeld, .scheduled:
            return nil
        }
    }

    /// The end a segment travels to, for segments of a connection (nil for the rest): the
    /// partition holds them at that end, in order.
    func receivingEnd(of action: SimulationEvent.Action) -> SimulatedLinkEnd? {
        switch action {
        case .established(_, let end), .data(let end, _), .endOfOutput(let end), .windowUpdate(let end, _),
            .reset(let end):
            return end
        case .syn, .refused, .readable, .writable, .accept, .resolved, .flushHeld, .scheduled:
            return nil
        }
    }
}

/// Two hosts, the one added first first.
struct HostPair: Hashable {
    let first: Int
    let second: Int

    init(_ one: SimulatedHost, _ other: SimulatedHost) {
        first = min(one.index, other.index)
        second = max(one.index, other.index)
    }
}
