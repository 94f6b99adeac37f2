/// The trace entries a network keeps: all of them, or the last `limit` in a ring.
struct SimulationTraceBuffer {
    private var storage: [SimulationTraceEntry] = []
    /// Where the oldest entry is in `storage` once the ring is full.
    private var start = 0
    /// Entries appended in all.
    private(set) var count = 0

    var limit: Int? {
        didSet {
            precondition(limit.map { $0 >= 0 } ?? true, "SimulatedNetwork.traceLimit must not be negative")
            let kept = entries
            start = 0
            storage = limit.map { Array(kept.suffix($0)) } ?? kept
        }
    }

    /// The entries kept, oldest first.
    var entries: [SimulationTraceEntry] {
        start == 0 ? storage : Array(storage[start...] + storage[..<start])
    }

    mutating func append(_ entry: SimulationTraceEntry) {
        count += 1
        guard let limit else {
            storage.append(entry)
            return
        }
        if storage.count < limit {
            storage.append(entry)
        } else if limit > 0 {
            storage[start] = entry
            start = (start + 1) % limit
        }
    }
}
