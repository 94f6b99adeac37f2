/// How a name resolves badly on a ``SimulatedNetwork``: set one by hand in
/// ``SimulatedNetwork/nameFaults``, or let ``SimulatedFaultPlan/nameFaultProbability`` choose.
public enum SimulatedNameFault: Sendable, Hashable {
    /// The name resolves as it would, `delay` later (a slow DNS server): the connect's timeout,
    /// which covers resolution, may run out first.
    case late(Duration)
    /// The resolver never answers: a connect by that name waits until its timeout
    /// (`TCPError.timedOut`).
    case never
    /// The name resolves to `address`, an IPv4 literal: a dead one, which no host has (the
    /// connect goes unanswered until its timeout), or the address of a host that refuses or has
    /// nothing listening on the port (`ECONNREFUSED`).
    case address(String)
}
