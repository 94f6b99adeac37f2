import TomorrowlandLoop
internal import TomorrowlandScheduling

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
/// The loops' timer queue (``TimerHeap``), keyed by (time, sequence number): the sequence number
/// keeps equal times in the order they were scheduled, so events with equal times run in that
/// order. Keys are unique, so the order in which events leave does not depend on how the heap
/// stores them. Each action stays in its slot from insertion to removal.
///
/// `SimulationLoopSchedule` stays a structure of its own: it updates a loop's position in place,
/// which a queue of events never does.
///
/// A class: its `deinit` frees the heap's buffers (``TimerHeap`` leaves that to its owner).
final class SimulationEventQueue {
    private var heap = TimerHeap<SimulationEvent.Action>()
    private var nextSequence: UInt64 = 0

    deinit {
        heap.deallocate()
    }

    /// When the first event is due, if any.
    var firstTime: UInt64? { heap.minKey?.deadline }

    /// Inserts after every event due at or before its time: equal times keep scheduling order.
    func insert(_ event: SimulationEvent) {
        heap.insert(event.action, deadline: event.time, sequence: nextSequence)
        nextSequence += 1
    }

    /// Removes the cancelled scheduled actions at the head: run, they would do nothing, yet keep
    /// the network from being idle (and move its clock) until their instant.
    func removeCancelledActionsFirst() {
        while case .scheduled(let action)? = heap.minPayload, action.isCancelled {
            _ = heap.removeMin()
        }
    }

    /// Removes the first event and returns its action; there must be one.
    func removeFirst() -> SimulationEvent.Action {
        heap.removeMin()
    }
}
