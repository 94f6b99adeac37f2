/// How long a segment takes from one simulated host to another: drawn for each segment from this
/// distribution with the simulation's seeded generator. Segments of one direction of a connection
/// still arrive in the order they were sent, as over TCP.
public struct SimulatedLatency: Sendable, Hashable {
    /// The shortest delay, in nanoseconds.
    let minimum: UInt64
    /// The longest delay, in nanoseconds.
    let maximum: UInt64

    /// Always `latency`.
    public static func fixed(_ latency: Duration) -> SimulatedLatency {
        let nanoseconds = latency.simulationNanoseconds
        return SimulatedLatency(minimum: nanoseconds, maximum: nanoseconds)
    }

    /// Uniformly between the bounds of `range`, to the nanosecond.
    public static func uniform(_ range: ClosedRange<Duration>) -> SimulatedLatency {
        SimulatedLatency(
            minimum: range.lowerBound.simulationNanoseconds, maximum: range.upperBound.simulationNanoseconds)
    }

    /// One draw.
    func draw(_ random: inout SimulationRandom) -> UInt64 {
        random.number(in: minimum...maximum)
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to zero below and `UInt64.max` above.
    var simulationNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return UInt64.max }
        let (sum, overflowed) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflowed ? UInt64.max : sum
    }
}
