/// An action that runs at an instant of a network's clock, as an event of its own.
final class SimulatedScheduledAction {
    /// What the trace calls it; nil for the network's own actions (its fault plan's draws),
    /// which record what they do themselves.
    let label: String?
    let body: () -> Void
    /// Cancelled before its instant: it neither runs nor appears in the trace.
    var isCancelled = false

    init(label: String?, body: @escaping () -> Void) {
        self.label = label
        self.body = body
    }
}

/// An action scheduled on a ``SimulatedNetwork``'s clock
/// (``SimulatedNetwork/schedule(at:named:_:)``), which can be cancelled until it runs.
///
/// A cancelled action does not run, leaves no line in the trace, and no longer keeps the network
/// from being idle (``SimulatedNetwork/runUntilIdle(maxEvents:)``): what may no longer happen
/// (a timeout whose wait ended first, a step of a process that is gone) is called off, so that
/// the trace reports only what happened.
///
/// - Important: `@unchecked Sendable` so that callbacks resolving on the network's thread can
///   hold it: touch it only on the thread that drives the network.
public final class SimulatedScheduledActionHandle: @unchecked Sendable {
    private let action: SimulatedScheduledAction

    init(_ action: SimulatedScheduledAction) {
        self.action = action
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { action.isCancelled }

    /// Calls the action off: if it has not run yet, it never does, and the trace does not name
    /// it. Does nothing once it ran.
    public func cancel() {
        action.isCancelled = true
    }
}

extension SimulatedNetwork {
    /// Runs `action` when the network's clock reaches `instant` (a time since the network was
    /// created, as ``now``), recording `label` in the ``trace`` as it runs.
    ///
    /// For what a test wants at an exact moment: a crash, a restart, a partition, or what a
    /// signal would start in a daemon (its graceful shutdown on SIGTERM, which a simulated loop
    /// cannot receive). The action runs on the thread that drives the network, between events,
    /// outside every host's loop: it may inject faults, and call a host's loop and TCP API as
    /// code outside the loop would (a listener's `shutdownGracefully(within:)`, a loop's
    /// `execute`). Actions due at the same instant run in the order they were scheduled, before
    /// the hosts' loop work due then. An instant already past means now (the next event).
    ///
    /// - Parameters:
    ///   - instant: When, on the network's clock.
    ///   - label: What the trace calls the action.
    ///   - action: The action; it must not drive the network (``step()``, ``run(for:)``...).
    /// - Returns: A handle that cancels the action until it runs.
    @discardableResult
    public func schedule(
        at instant: Duration, named label: String = "action", _ action: @escaping () -> Void
    ) -> SimulatedScheduledActionHandle {
        let target = instant.simulationNanoseconds
        let scheduled = SimulatedScheduledAction(label: label, body: action)
        schedule(.scheduled(scheduled), after: target > nanoseconds ? target - nanoseconds : 0)
        return SimulatedScheduledActionHandle(scheduled)
    }

    /// Runs `action` once `delay` has passed on the network's clock; see
    /// ``schedule(at:named:_:)``.
    ///
    /// - Parameters:
    ///   - delay: How long from ``now``.
    ///   - label: What the trace calls the action.
    ///   - action: The action; it must not drive the network.
    /// - Returns: A handle that cancels the action until it runs.
    @discardableResult
    public func schedule(
        after delay: Duration, named label: String = "action", _ action: @escaping () -> Void
    ) -> SimulatedScheduledActionHandle {
        let scheduled = SimulatedScheduledAction(label: label, body: action)
        schedule(.scheduled(scheduled), after: delay.simulationNanoseconds)
        return SimulatedScheduledActionHandle(scheduled)
    }

    /// Schedules one of the network's own actions, which the trace does not name (it records
    /// what the action does); returns it, to cancel.
    @discardableResult
    func scheduleOwnAction(after delay: UInt64, _ action: @escaping () -> Void) -> SimulatedScheduledAction {
        let scheduled = SimulatedScheduledAction(label: nil, body: action)
        schedule(.scheduled(scheduled), after: delay)
        return scheduled
    }

    /// Runs a scheduled action, its event having come.
    func runScheduled(_ action: SimulatedScheduledAction) {
        // Cancelled ones are dropped before they come up (`nextEvent`); this is a backstop.
        guard !action.isCancelled else { return }
        if let label = action.label { record(.action, label) }
        action.body()
        // An action may touch any loop from outside its turns (shut a listener down, close a
        // connection): every loop is asked its next time again. Actions are rare; the picker's
        // cost stays with the loops' own events.
        for host in hosts {
            for loop in host.loops { loopSchedule.markStale(loop) }
        }
    }
}
