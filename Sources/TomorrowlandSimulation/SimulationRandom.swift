/// The simulation's seeded source of randomness: SplitMix64, written here so that a seed means
/// the same sequence on every platform and in every process (the standard library's generator is
/// not seedable).
///
/// Every choice a ``SimulatedNetwork`` makes (latencies, where reads and writes split) draws from
/// one of these, in the order the simulation makes them, so one seed replays one run. Clients in a
/// simulated test may use their own, seeded from the network's (``SimulatedNetwork/makeRandom()``),
/// to keep their choices replayable too.
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `range`, uniformly (by rejection, so without modulo bias).
    mutating func number(in range: ClosedRange<UInt64>) -> UInt64 {
        let span = range.upperBound &- range.lowerBound
        if span == UInt64.max { return next() }
        let count = span + 1
        // The largest multiple of `count` that fits: draws at or above it would bias low values.
        let limit = UInt64.max - (UInt64.max % count)
        while true {
            let value = next()
            if value < limit { return range.lowerBound + value % count }
        }
    }

    /// A count in `1...available` where a read or write splits: half the time all of it, otherwise
    /// a uniform point, down to one byte.
    mutating func splitPoint(of available: Int) -> Int {
        guard available > 1 else { return available }
        if next() & 1 == 0 { return available }
        return Int(number(in: 1...UInt64(available)))
    }
}
