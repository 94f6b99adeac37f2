/// What a workload is, independent of the library that runs it (notes/benchmarks.md).
struct WorkloadSpec: Sendable {
    /// The id both libraries register their runner under.
    let id: String
    let title: String
    let unit: String
    let unitsPerIteration: Int
    /// The NIO runner this row compares with: the same id, or the plain workload for a variant
    /// that only our library has (W1i, W2i and W3i run NIO's W1, W2 and W3 once, not twice).
    let nioID: String
    /// Where our side of the row runs: on our libevent `EventLoop`, or on the NIO loop that NIO's
    /// side uses too (the ours@NIO rows).
    let oursHost: OursHost
    /// Our runner for this row, in the library of `oursHost`: the same id, or the plain workload
    /// for an ours@NIO row (W1@NIO runs the W1 shape on the NIO loop).
    let oursID: String

    init(
        _ id: String, _ title: String, unit: String, unitsPerIteration: Int, nioID: String? = nil,
        oursHost: OursHost = .eventLoop, oursID: String? = nil
    ) {
        self.id = id
        self.title = title
        self.unit = unit
        self.unitsPerIteration = unitsPerIteration
        self.nioID = nioID ?? id
        self.oursHost = oursHost
        self.oursID = oursID ?? id
    }

    /// The ours@NIO row of workload `base`: our promises on `.nio(loop)`, on the same NIO loop
    /// and thread as NIO's own runner of `base`.
    static func onNIOLoop(_ base: String, _ title: String, unit: String, unitsPerIteration: Int) -> WorkloadSpec {
        WorkloadSpec(
            "\(base)@NIO", "\(title), ours@NIO: same NIO loop", unit: unit, unitsPerIteration: unitsPerIteration,
            nioID: base, oursHost: .nio, oursID: base)
    }

    static let all: [WorkloadSpec] = [
        WorkloadSpec("W1", "chain-map (1000 links)", unit: "link", unitsPerIteration: 1000),
        WorkloadSpec(
            "W1i", "chain-map, ours on .immediate (extra)", unit: "link", unitsPerIteration: 1000, nioID: "W1"),
        WorkloadSpec("W2", "fanout (1000 callbacks)", unit: "callback", unitsPerIteration: 1000),
        WorkloadSpec(
            "W2i", "fanout, ours on .immediate (extra)", unit: "callback", unitsPerIteration: 1000, nioID: "W2"),
        WorkloadSpec("W3", "create-fulfill (100k)", unit: "promise", unitsPerIteration: 100_000),
        WorkloadSpec(
            "W3i", "create-fulfill, ours on .immediate (extra)", unit: "promise", unitsPerIteration: 100_000,
            nioID: "W3"),
        WorkloadSpec("W4", "flatmap-async (1000 links)", unit: "link", unitsPerIteration: 1000),
        WorkloadSpec("W5", "timer-insert-cancel (100k)", unit: "timer", unitsPerIteration: 100_000),
        WorkloadSpec("W5r", "timer-cancel-reverse (10k, extra)", unit: "timer", unitsPerIteration: 10_000),
        WorkloadSpec("W5b", "timer-fire (10k over 10 ms)", unit: "timer", unitsPerIteration: 10_000),
        WorkloadSpec("W6", "cross-thread-execute (1M)", unit: "submission", unitsPerIteration: 1_000_000),
        WorkloadSpec("W7", "when-all (1000)", unit: "element", unitsPerIteration: 1000),
        WorkloadSpec("W8", "deadline-not-fired (100 × 1k)", unit: "request", unitsPerIteration: 100_000),
        // Like for like: our promises and NIO's futures on one NIO loop, one thread.
        .onNIOLoop("W1", "chain-map", unit: "link", unitsPerIteration: 1000),
        .onNIOLoop("W2", "fanout", unit: "callback", unitsPerIteration: 1000),
        .onNIOLoop("W3", "create-fulfill", unit: "promise", unitsPerIteration: 100_000),
        .onNIOLoop("W4", "flatmap-async", unit: "link", unitsPerIteration: 1000),
        .onNIOLoop("W7", "when-all", unit: "element", unitsPerIteration: 1000),
        .onNIOLoop("W8", "deadline-not-fired", unit: "request", unitsPerIteration: 100_000),
    ]
}

/// The loop our side of a workload runs on.
enum OursHost: Sendable {
    /// Our libevent `EventLoop` on a thread of its own, contexts `.loop(loop)`.
    case eventLoop
    /// The NIO loop of NIO's side (a one-thread `MultiThreadedEventLoopGroup`), contexts
    /// `.nio(loop)` from TomorrowlandNIO.
    case nio
}
