/// Which faults a ``SimulatedNetwork`` injects by itself, and how often: every draw comes from
/// the network's seeded generator, so one seed replays the same faults at the same instants.
///
/// Every kind is off by default (``none``): set the mean interval of the kinds you want, then
/// ``SimulatedNetwork/faultPlan``. Each kind draws the wait before its next fault uniformly
/// between nothing and twice its mean, from the moment the plan is set. Every fault injected is
/// recorded in the network's trace and counted in ``SimulatedNetwork/faultCount``; what ends a
/// fault (a heal, a restart, a host answering again) is recorded too.
///
/// ```swift
/// var plan = SimulatedFaultPlan()
/// plan.resetInterval = .milliseconds(40)
/// plan.partitionInterval = .milliseconds(200)
/// plan.crashInterval = .seconds(2)
/// plan.crashableHosts = ["server"]
/// network.onHostRestart = { host in startDaemon(on: host.loop) }  // the crash lost it
/// network.faultPlan = plan
/// ```
///
/// ## Reacting to crashes and restarts
///
/// A crash shuts the host's loops down: the daemon that ran there is gone, with its memory.
/// The plan restarts the host after ``restartDelay`` with fresh loops, and nothing listens
/// there until the caller starts its daemon again: do it in
/// ``SimulatedNetwork/onHostRestart``, on ``SimulatedHost/loop`` or ``SimulatedHost/group``
/// (the old ones stay shut down). ``SimulatedNetwork/onHostCrash`` tells a checker that
/// the state the daemon held is lost. Clients see their connections reset, and connects
/// unanswered while the host is down, then refused until the daemon listens again.
///
/// ## Ending a run
///
/// The plan's draws are events of the network: while a plan with a fault kind on is set, the
/// network is never idle. Set ``SimulatedNetwork/faultPlan`` to ``none`` to stop them (faults
/// already injected still end: partitions heal, crashed hosts restart, hosts answer again), then
/// run until idle.
public struct SimulatedFaultPlan: Sendable, Hashable {
    /// No fault at all: the default.
    public static let none = SimulatedFaultPlan()

    /// Mean time between two resets of a connection, chosen at random among the open
    /// connections of every host (the reset starts at its end, and reaches its peer after a
    /// latency); nil (the default) for none.
    public var resetInterval: Duration?

    /// Mean time between two partitions; nil (the default) for none. Each cuts one host, chosen
    /// at random, from one or more of the others, and heals after a time drawn from
    /// ``partitionLength``; no other partition starts until it healed. The heal is
    /// ``SimulatedNetwork/heal()``: it ends partitions made by hand too.
    public var partitionInterval: Duration?
    /// How long a partition lasts: drawn uniformly in this range. 5 to 400 ms by default.
    public var partitionLength: ClosedRange<Duration> = .milliseconds(5) ... .milliseconds(400)

    /// Mean time between two crashes; nil (the default) for none. Each crashes one of
    /// ``crashableHosts`` that is up, chosen at random, and restarts it after a time drawn from
    /// ``restartDelay`` (see "Reacting to crashes and restarts").
    public var crashInterval: Duration?
    /// The names of the hosts a crash may hit; none by default, so that a plan crashes only what
    /// the caller knows how to restart.
    public var crashableHosts: [String] = []
    /// How long a crashed host stays down before it restarts: drawn uniformly in this range;
    /// nil to leave it down. 10 ms to 1 s by default.
    public var restartDelay: ClosedRange<Duration>? = .milliseconds(10) ... .seconds(1)

    /// Mean time between two descriptor exhaustions; nil (the default) for none. Each makes one
    /// host, chosen at random among those with a listening port, run out of descriptors for a
    /// time drawn from ``descriptorExhaustionLength``: its accepts fail with `EMFILE` (its
    /// listeners back off and retry), so connections wait in the backlog, and once it is full
    /// further attempts are dropped and retried (a full backlog).
    public var descriptorExhaustionInterval: Duration?
    /// How long a descriptor exhaustion lasts: drawn uniformly in this range. 50 to 500 ms by
    /// default.
    public var descriptorExhaustionLength: ClosedRange<Duration> = .milliseconds(50) ... .milliseconds(500)

    /// Mean time between two spells in which a host refuses connection attempts or leaves them
    /// unanswered (one or the other, at random); nil (the default) for none. The host, chosen
    /// at random among those that are up, answers again after a time drawn from
    /// ``unreachableLength``; connections it already has are not touched.
    public var unreachableInterval: Duration?
    /// How long a host refuses or ignores connection attempts: drawn uniformly in this range. 50
    /// to 500 ms by default.
    public var unreachableLength: ClosedRange<Duration> = .milliseconds(50) ... .milliseconds(500)

    /// The probability that one name resolution meets a fault: it resolves late (by a time drawn
    /// from ``lateNameDelay``), never, or to a dead address, one of the three at random. 0 (the
    /// default) for none. Names listed in ``SimulatedNetwork/nameFaults`` keep their own fault.
    public var nameFaultProbability: Double = 0
    /// How much later than usual a late name resolves: drawn uniformly in this range. 10 ms to
    /// 2 s by default.
    public var lateNameDelay: ClosedRange<Duration> = .milliseconds(10) ... .seconds(2)

    /// A plan with no fault; set the kinds you want.
    public init() {}
}
