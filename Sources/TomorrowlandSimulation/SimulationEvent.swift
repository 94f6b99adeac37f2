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
///
/// A binary min-heap on (time, sequence number): inserting into a sorted array would move a
/// large part of it on every event, and dropping the run head every so often would move the
/// rest, together a large share of a long simulation. The sequence number keeps equal times in the order they were
/// scheduled, so events with equal times run in that order.
///
/// The heap moves keys only; each action stays in its slot from insertion to removal: moving
/// the actions with the keys would retain and release their payloads at every swap.
struct SimulationEventQueue {
    private struct Key {
        let time: UInt64
        let sequence: UInt64
        /// Where the action is in `slots`.
        let slot: Int

        func precedes(_ other: Key) -> Bool {
            time < other.time || (time == other.time && sequence < other.sequence)
        }
    }

    private var keys: [Key] = []
    private var slots: [SimulationEvent.Action?] = []
    /// Slots emptied by `removeFirst`, reused by `insert`.
    private var freeSlots: [Int] = []
    private var nextSequence: UInt64 = 0

    /// When the first event is due, if any.
    var firstTime: UInt64? { keys.first?.time }

    /// Inserts after every event due at or before its time: equal times keep scheduling order.
    mutating func insert(_ event: SimulationEvent) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = event.action
        } else {
            slot = slots.count
            slots.append(event.action)
        }
        keys.append(Key(time: event.time, sequence: nextSequence, slot: slot))
        nextSequence += 1
        var child = keys.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard keys[child].precedes(keys[parent]) else { break }
            keys.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the cancelled scheduled actions at the head: run, they would do nothing, yet keep
    /// the network from being idle (and move its clock) until their instant.
    mutating func removeCancelledActionsFirst() {
        while let key = keys.first, case .scheduled(let action)? = slots[key.slot], action.isCancelled {
            _ = removeFirst()
        }
    }

    /// Removes the first event and returns its action.
    mutating func removeFirst() -> SimulationEvent.Action {
        let slot = keys[0].slot
        keys.swapAt(0, keys.count - 1)
        keys.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < keys.count else { break }
            var best = left
            if left + 1 < keys.count && keys[left + 1].precedes(keys[left]) { best = left + 1 }
            guard keys[best].precedes(keys[parent]) else { break }
            keys.swapAt(best, parent)
            parent = best
        }
        freeSlots.append(slot)
        guard let action = slots[slot].take() else {
            preconditionFailure("SimulationEventQueue: an empty slot in the heap")
        }
        return action
    }
}
