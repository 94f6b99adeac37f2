/// What a ``SimulatedNetwork`` keeps for its faults beyond the network's own state: the count,
/// the plan and its draws, name faults, and who hears of crashes and restarts.
///
/// Touched only on the network's thread, like the network.
final class SimulationFaultState {
    /// Faults injected so far (``SimulatedNetwork/faultCount``).
    var count = 0
    /// The plan whose draws are running (``SimulatedNetwork/faultPlan``).
    var plan = SimulatedFaultPlan.none
    /// Bumped at each new plan: draws scheduled for an earlier plan do nothing when they come.
    var planGeneration = 0
    /// The next draw of each kind of the current plan: cancelled when the plan is replaced, so
    /// that the draws of a plan that no longer runs keep no event pending (a run that sets
    /// ``SimulatedFaultPlan/none`` goes idle once the faults under way ended).
    var pendingDraws: [PlannedFault: SimulatedScheduledAction] = [:]
    /// Whether a partition the plan made is still waiting for its heal.
    var planPartitionIsActive = false
    /// Names that resolve badly (``SimulatedNetwork/nameFaults``).
    var nameFaults: [String: SimulatedNameFault] = [:]
    /// ``SimulatedNetwork/onHostCrash``.
    var onHostCrash: ((SimulatedHost) -> Void)?
    /// ``SimulatedNetwork/onHostRestart``.
    var onHostRestart: ((SimulatedHost) -> Void)?
}

extension SimulatedNetwork {
    /// How many faults were injected so far, by hand or by ``faultPlan``: resets, partitions,
    /// crashes, descriptor exhaustions, hosts that refuse or stop answering, names that resolve
    /// badly. What ends a fault (a heal, a restart) does not count. For a run's summary line
    /// (`faults=F`); every one of them is also in the ``trace``, as a `fault` entry.
    public var faultCount: Int { faultState.count }

    /// Records an injected fault in the trace and counts it.
    func recordFault(_ detail: String) {
        faultState.count += 1
        record(.fault, detail)
    }
}
