extension SimulatedNetwork {
    /// The faults the network injects by itself, every choice drawn from its seed;
    /// ``SimulatedFaultPlan/none`` by default.
    ///
    /// Setting a plan starts its draws from ``now`` and drops those of the plan it replaces; the
    /// ends of faults already injected still come (partitions heal, crashed hosts restart, hosts
    /// answer again, descriptors come back), and then, with no plan, the network can be idle. While a plan with a timed kind is set, its draws are
    /// pending events, so the network is never idle: set ``SimulatedFaultPlan/none`` before
    /// ``runUntilIdle(maxEvents:)``. See ``SimulatedFaultPlan`` for each kind, and for how a
    /// caller reacts to crashes and restarts (``onHostCrash``, ``onHostRestart``).
    ///
    /// Set it on the thread that drives the network, outside every loop's work.
    public var faultPlan: SimulatedFaultPlan {
        get { faultState.plan }
        set {
            faultState.plan = newValue
            faultState.planGeneration += 1
            for draw in faultState.pendingDraws.values { draw.isCancelled = true }
            faultState.pendingDraws = [:]
            for kind in PlannedFault.allCases {
                if let mean = kind.meanInterval(in: newValue) { scheduleDraw(of: kind, mean: mean) }
            }
        }
    }

    /// Schedules the next fault of `kind`, uniformly between 1 ns and twice `mean` from now; it
    /// does nothing if the plan changed meanwhile.
    private func scheduleDraw(of kind: PlannedFault, mean: Duration) {
        let generation = faultState.planGeneration
        let twice = mean.simulationNanoseconds.multipliedReportingOverflow(by: 2)
        let delay = random.number(in: 1...max(1, twice.overflow ? UInt64.max : twice.partialValue))
        // Unowned: the event lives in the network's own queue, so it never outlives the network.
        faultState.pendingDraws[kind] = scheduleOwnAction(after: delay) { [unowned self] in
            guard faultState.planGeneration == generation else { return }
            inject(kind)
            scheduleDraw(of: kind, mean: mean)
        }
    }

    private func inject(_ kind: PlannedFault) {
        switch kind {
        case .reset: injectReset()
        case .partition: injectPartition()
        case .crash: injectCrash()
        case .descriptorExhaustion: injectDescriptorExhaustion()
        case .unreachable: injectUnreachable()
        }
    }

    /// Resets one open connection, chosen among every host's, oldest host first.
    private func injectReset() {
        let open = hosts.filter { !$0.isCrashed }.flatMap { host in
            host.ends.filter { !$0.isReset && !$0.isReleased && $0.connection != nil }
        }
        guard let end = pick(from: open), let connection = end.connection else { return }
        reset(connection)
    }

    /// Cuts one host from some of the others, and heals after a drawn length.
    private func injectPartition() {
        guard !faultState.planPartitionIsActive, hosts.count >= 2, let cut = pick(from: hosts) else { return }
        var others = hosts.filter { $0 !== cut }
        let count = Int(random.number(in: 1...UInt64(others.count)))
        // The first `count` of a partial Fisher–Yates shuffle.
        for index in 0..<count {
            others.swapAt(index, index + Int(random.number(in: 0...UInt64(others.count - 1 - index))))
        }
        partition([cut], from: Array(others[..<count]))
        faultState.planPartitionIsActive = true
        scheduleOwnAction(after: random.number(in: faultState.plan.partitionLength.simulationNanoseconds)) {
            [unowned self] in
            faultState.planPartitionIsActive = false
            heal()
        }
    }

    /// Crashes one crashable host that is up, and restarts it after a drawn delay.
    private func injectCrash() {
        let plan = faultState.plan
        let candidates = hosts.filter { plan.crashableHosts.contains($0.name) && !$0.isCrashed }
        guard let host = pick(from: candidates) else { return }
        crash(host)
        guard let delay = plan.restartDelay else { return }
        let generation = host.generation
        scheduleOwnAction(after: random.number(in: delay.simulationNanoseconds)) { [unowned self] in
            // Restarted by hand meanwhile (and perhaps crashed again, with a restart of its own).
            guard host.isCrashed, host.generation == generation else { return }
            restart(host)
        }
    }

    /// Runs one host with a listening port out of descriptors for a drawn length.
    private func injectDescriptorExhaustion() {
        let candidates = hosts.filter { !$0.isCrashed && !$0.ports.isEmpty && !$0.descriptorsExhaustedByPlan }
        guard let host = pick(from: candidates) else { return }
        recordFault("descriptors exhausted on \(host.name)")
        host.descriptorsExhaustedByPlan = true
        let generation = host.generation
        let length = random.number(in: faultState.plan.descriptorExhaustionLength.simulationNanoseconds)
        scheduleOwnAction(after: length) { [unowned self] in
            // A restart gave the host a fresh process, with its descriptors.
            guard host.generation == generation, host.descriptorsExhaustedByPlan else { return }
            host.descriptorsExhaustedByPlan = false
            record(.fault, "descriptors back on \(host.name)")
        }
    }

    /// Makes one host that answers refuse or ignore connection attempts for a drawn length.
    private func injectUnreachable() {
        let candidates = hosts.filter { !$0.isCrashed && $0.incomingConnections == .answered }
        guard let host = pick(from: candidates) else { return }
        let refuses = random.next() & 1 == 0
        host.incomingConnections = refuses ? .refused : .unanswered
        recordFault(refuses ? "\(host.name) refuses connections" : "\(host.name) stops answering")
        let generation = host.generation
        let mode = host.incomingConnections
        scheduleOwnAction(after: random.number(in: faultState.plan.unreachableLength.simulationNanoseconds)) {
            [unowned self] in
            // Changed by hand, or crashed, meanwhile: that state stands.
            guard host.generation == generation, !host.isCrashed, host.incomingConnections == mode else { return }
            host.incomingConnections = .answered
            record(.fault, "\(host.name) answers again")
        }
    }

    /// One element of `candidates`, drawn uniformly; nil when there is none (and then no draw).
    private func pick<Element>(from candidates: [Element]) -> Element? {
        guard !candidates.isEmpty else { return nil }
        return candidates[Int(random.number(in: 0...UInt64(candidates.count - 1)))]
    }
}

/// The fault kinds of a ``SimulatedFaultPlan`` that draw on their own clock, in the order the
/// plan schedules them.
enum PlannedFault: CaseIterable {
    case reset, partition, crash, descriptorExhaustion, unreachable

    func meanInterval(in plan: SimulatedFaultPlan) -> Duration? {
        switch self {
        case .reset: plan.resetInterval
        case .partition: plan.partitionInterval
        case .crash: plan.crashInterval
        case .descriptorExhaustion: plan.descriptorExhaustionInterval
        case .unreachable: plan.unreachableInterval
        }
    }
}
