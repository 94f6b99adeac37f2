import Synchronization

/// The daemon's key space: one or more ``KeyValueStore`` shards, each behind its own lock, so
/// that connections on every loop of an `EventLoopGroup` see the same keys.
///
/// Why shared shards and not a store per loop: with one listener per loop, two connections of
/// one client can land on different loops, and a GET must see the SET made on the other one.
/// Routing each key to an owning loop would cost a hop (two queue transfers and a wakeup) per
/// request; a shard lock costs one uncontended compare-exchange, and with 64 shards two loops
/// rarely meet on one. With one loop there is one shard and the lock is never contended.
/// The expiry sweep takes a shard's lock for at most ``sweepSlice`` heap entries at a time, so a
/// burst of expiring keys never holds up the requests of the other loops for long.
/// Commands on several keys (DEL, EXISTS) take the shards one key at a time, so unlike Redis
/// they are atomic per key, not as a whole.
///
/// - Important: `@unchecked Sendable`: each shard is only touched while holding its lock.
public final class ShardedStore: @unchecked Sendable {
    private final class Shard {
        let lock = PthreadMutex()
        var store: KeyValueStore
        init(clock: KeyValueClock) { store = KeyValueStore(clock: clock) }
    }

    private let shards: [Shard]
    /// Lock acquisitions made by sweeps, for the tests of the slicing.
    private let sweepLockCount = Atomic<Int>(0)

    /// The most heap entries a sweep looks at while holding one shard's lock.
    public static let sweepSlice = 128
    /// The store's clock.
    public let clock: KeyValueClock

    /// A store of `shardCount` shards (1 for a single loop) reading time from `clock`.
    public init(shardCount: Int = 1, clock: KeyValueClock) {
        precondition(shardCount >= 1, "ShardedStore: shardCount must be at least 1")
        self.clock = clock
        shards = (0..<shardCount).map { _ in Shard(clock: clock) }
    }

    /// Runs `body` with the shard owning `key`, under its lock.
    @inline(__always)
    func withShard<R>(for key: StoreKey, _ body: (inout KeyValueStore) -> R) -> R {
        let shard = shards.count == 1 ? shards[0] : shards[Self.shardIndex(key, count: shards.count)]
        return shard.lock.withLock { body(&shard.store) }
    }

    /// FNV-1a of the key's bytes: cheap for short keys and independent of Hasher's per-process seed.
    private static func shardIndex(_ key: StoreKey, count: Int) -> Int {
        key.withBytes { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            return Int(hash % UInt64(count))
        }
    }

    /// The number of keys in all shards (expired keys not yet swept included, as Redis).
    public var count: Int {
        shards.reduce(0) { total, shard in
            shard.lock.withLock { total + shard.store.count }
        }
    }

    /// Removes every key.
    public func removeAll() {
        for shard in shards {
            shard.lock.withLock { shard.store.removeAll() }
        }
    }

    /// Removes expired keys from every shard, at most `budget` heap entries per shard, in slices
    /// of at most ``sweepSlice`` entries per lock hold (the lock is released between slices).
    ///
    /// - Returns: the keys removed, and whether due entries remain in some shard.
    @discardableResult
    public func sweepExpired(budget: Int = 10_000) -> (removed: Int, more: Bool) {
        var removed = 0
        var more = false
        for shard in shards {
            var left = budget
            var shardHasMore = false
            while left > 0 {
                let slice = min(left, Self.sweepSlice)
                let result = shard.lock.withLock { shard.store.sweep(budget: slice) }
                sweepLockCount.wrappingAdd(1, ordering: .relaxed)
                removed += result.removed
                shardHasMore = result.more
                // `more` means the slice stopped at its limit, having looked at `slice` entries.
                guard result.more else { break }
                left -= slice
            }
            more = more || shardHasMore
        }
        return (removed, more)
    }

    /// How many times sweeps have taken a shard's lock.
    var sweepLockAcquisitions: Int { sweepLockCount.load(ordering: .relaxed) }

    /// Heap entries awaiting a sweep in all shards (stale ones included).
    public var pendingExpiryCount: Int {
        shards.reduce(0) { total, shard in
            shard.lock.withLock { total + shard.store.expiryHeapCount }
        }
    }
}
