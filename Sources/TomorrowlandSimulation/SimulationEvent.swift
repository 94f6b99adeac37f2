import TomorrowlandLoop

/// Something the network does at a time on its clock: a segment arriving, a readiness
/// notification, an answer from the name resolver.
struct SimulationEvent {
    enum Action {
        /// A connection attempt reaches the host at `ip`.
        case syn(SimulatedConnectAttempt, ip: String, port: UInt16)
        /// The answer to an accepted attempt reaches the connecting host.
        case established(SimulatedConnectAttempt, SimulatedLinkEnd)
        /// The refusal of an attempt reaches the connecting host.
        case refused(SimulatedConnectAttempt)
        /// Bytes reach an end.
        case data(SimulatedLinkEnd, [UInt8])
        /// The peer's end of output reaches an end.
        case endOfOutput(SimulatedLinkEnd)
        /// The peer read this many bytes: the end's window opens by as much.
        case windowUpdate(SimulatedLinkEnd, Int)
        /// The peer's reset reaches an end.
        case reset(SimulatedLinkEnd)
        /// An end has input for its connection.
        case readable(SimulatedLinkEnd)
        /// An end takes output again.
        case writable(SimulatedLinkEnd)
        /// A healed partition lets the segments it held at an end arrive, in order.
        case flushHeld(SimulatedLinkEnd)
        /// A port has connections in its backlog for its listener.
        case accept(SimulatedPort)
        /// The name resolver answers.
        case resolved(NameResolution, Result<[TCPSocketAddress], TCPError>)
        /// An action scheduled on the network's clock: a test's, or the fault plan's.
        case scheduled(SimulatedScheduledAction)
    }

    /// What the network runs next, and when.
    struct Pick {
        enum Source {
            case network
            case loop(SimulatedHost, Int)
        }

        let time: UInt64
        let source: Source
    }

    let time: UInt64
    let action: Action
}

/// The network's pending events, ordered by (time, order of scheduling).
struct SimulationEventQueue {
    private var events: [SimulationEvent] = []
    private var head = 0

    var first: SimulationEvent? { head < events.count ? events[head] : nil }

    /// Inserts after every event due at or before its time: equal times keep scheduling order.
    mutating func insert(_ event: SimulationEvent) {
        var low = head
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].time <= event.time { low = middle + 1 } else { high = middle }
        }
        events.insert(event, at: low)
    }

    mutating func removeFirst() -> SimulationEvent {
        let event = events[head]
        head += 1
        if head > 1024 && head * 2 > events.count {
            events.removeFirst(head)
            head = 0
        }
        return event
    }
}
