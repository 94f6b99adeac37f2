/// How many recorded root promises are still pending and how old the oldest is: the figures of
/// a ``PendingPromiseReport`` without its list, what ``PendingPromiseTracking/summary()``
/// returns.
///
/// Cheap enough to read at every metrics scrape or every INFO command: it neither copies,
/// sorts nor describes a record.
public struct PendingPromiseSummary: Sendable, Hashable {
    /// The recorded root promises still pending (cancel requested or not): the number of
    /// promises a ``PendingPromiseReport`` taken at the same moment would list.
    public var count: Int
    /// How long ago the oldest of them was made, by the monotonic clock; nil when none is pending.
    public var oldestAge: Duration?
    /// The tracking's sampling interval when the summary was taken, as
    /// ``PendingPromiseReport/samplingInterval`` says it: 1 when every root promise is recorded,
    /// N when one in N is (``count`` is then about one pending promise in N), 0 when tracking is
    /// off.
    public var samplingInterval: Int

    /// Creates a summary; the tracking makes them, this is for tests of a consumer.
    public init(count: Int, oldestAge: Duration?, samplingInterval: Int) {
        self.count = count
        self.oldestAge = oldestAge
        self.samplingInterval = samplingInterval
    }
}

extension PendingPromiseTracking {
    /// How many recorded root promises are still pending and how old the oldest is, without
    /// building the report.
    ///
    /// Promises recorded while tracking was on are counted even after it went off, as
    /// ``report()`` lists them. Safe from any thread. Takes the lock that every recorded
    /// promise's creation and death take, and each recorded promise's own lock in turn while it
    /// counts (to read its state): its cost grows with the number of recorded promises alive, but
    /// it builds no list and describes no promise. With tracking never turned on, it takes the
    /// lock of an empty registry.
    public static func summary() -> PendingPromiseSummary {
        let (count, oldest) = PendingPromiseRegistry.shared.pendingSummary()
        // After the count: no promise it saw can be younger than this instant.
        let now = ContinuousClock.now
        return PendingPromiseSummary(
            count: count, oldestAge: oldest.map { now - $0 }, samplingInterval: samplingInterval)
    }

    /// The recorded root promises still pending: ``summary()``'s count.
    public static var pendingCount: Int {
        PendingPromiseRegistry.shared.pendingSummary().count
    }
}
