/// The data of one shard: byte-string keys to byte-string values, each with an optional
/// deadline after which it no longer exists.
///
/// Expiry is lazy plus swept: every access checks the key's deadline against the clock (so an
/// expired key is never observed), and ``sweep(budget:)``, which the daemon calls from a loop
/// timer, removes expired keys nobody touches, earliest deadline first, from an ``ExpiryHeap``.
/// Per-key loop timers were the alternative; see Examples/KeyValueDaemon/README.md for the
/// measurement behind the choice.
///
/// A struct, used in place through `inout` under the shard's lock: one exclusivity check per
/// command instead of one per access to a class's stored property. Not thread-safe:
/// ``ShardedStore`` serialises access to each shard.
struct KeyValueStore {
    struct Entry {
        var value: [UInt8]
        /// Milliseconds on the store's clock; `Entry.never` without a TTL.
        var deadline: Int64
    }

    static let never = Int64.max

    /// How SET treats an existing key.
    enum SetCondition {
        case always, ifAbsent, ifPresent
    }

    private(set) var entries: [StoreKey: Entry] = [:]
    private var expiry = ExpiryHeap()
    let clock: KeyValueClock

    init(clock: KeyValueClock) {
        self.clock = clock
    }

    /// Keys currently stored, including expired keys not yet swept (as Redis's DBSIZE).
    var count: Int { entries.count }

    /// Entries in the expiry heap, stale ones included (for tests and measurements).
    var expiryHeapCount: Int { expiry.count }

    /// The live entry of `key`, removing it first if its deadline has passed.
    @inline(__always)
    private mutating func liveEntry(_ key: StoreKey) -> Entry? {
        guard let entry = entries[key] else { return nil }
        if entry.deadline != Self.never && entry.deadline <= clock.nowMilliseconds {
            entries[key] = nil
            return nil
        }
        return entry
    }

    mutating func get(_ key: StoreKey) -> [UInt8]? {
        liveEntry(key)?.value
    }

    mutating func exists(_ key: StoreKey) -> Bool {
        liveEntry(key) != nil
    }

    /// Stores `value`; `deadline` is absolute (ms), nil for no TTL (or the old one with
    /// `keepTTL`). Returns false when the condition prevented it.
    mutating func set(
        _ key: StoreKey, value: [UInt8], deadline: Int64?, condition: SetCondition = .always,
        keepTTL: Bool = false
    ) -> Bool {
        let existing = condition == .always && !keepTTL ? nil : liveEntry(key)
        switch condition {
        case .always: break
        case .ifAbsent: if existing != nil { return false }
        case .ifPresent: if existing == nil { return false }
        }
        let newDeadline = deadline ?? (keepTTL ? existing?.deadline ?? Self.never : Self.never)
        let owned = key.owned
        entries[owned] = Entry(value: value, deadline: newDeadline)
        if newDeadline != Self.never && deadline != nil {
            expiry.insert(deadline: newDeadline, key: owned)
        }
        return true
    }

    /// Removes `key`; true if it existed (and had not expired).
    mutating func delete(_ key: StoreKey) -> Bool {
        guard let entry = entries.removeValue(forKey: key) else { return false }
        return entry.deadline == Self.never || entry.deadline > clock.nowMilliseconds
    }

    enum IncrementError: Error {
        case notAnInteger, overflow
    }

    /// Adds `delta` to the integer stored at `key` (0 if missing), keeping its TTL.
    mutating func increment(_ key: StoreKey, by delta: Int) -> Result<Int, IncrementError> {
        let entry = liveEntry(key)
        var current = 0
        if let entry {
            guard let parsed = ASCIIInteger.parse(entry.value) else { return .failure(.notAnInteger) }
            current = parsed
        }
        let (sum, overflow) = current.addingReportingOverflow(delta)
        guard !overflow else { return .failure(.overflow) }
        let value = ASCIIInteger.bytes(sum)
        if let entry {
            // Replace the value in place: the key's storage and heap entry stay as they are.
            entries[key] = Entry(value: value, deadline: entry.deadline)
        } else {
            entries[key.owned] = Entry(value: value, deadline: Self.never)
        }
        return .success(sum)
    }

    /// Sets the deadline of an existing key; a deadline already past deletes it. Returns false
    /// if the key does not exist.
    mutating func expire(_ key: StoreKey, at deadline: Int64) -> Bool {
        guard let entry = liveEntry(key) else { return false }
        if deadline <= clock.nowMilliseconds {
            entries[key] = nil
            return true
        }
        let owned: StoreKey
        if let index = entries.index(forKey: key) {
            owned = entries.keys[index]
        } else {
            owned = key.owned
        }
        entries[owned] = Entry(value: entry.value, deadline: deadline)
        expiry.insert(deadline: deadline, key: owned)
        return true
    }

    /// Milliseconds left: nil if the key does not exist, `Entry.never` without a TTL.
    mutating func remainingMilliseconds(_ key: StoreKey) -> Int64? {
        guard let entry = liveEntry(key) else { return nil }
        if entry.deadline == Self.never { return Self.never }
        return entry.deadline - clock.nowMilliseconds
    }

    mutating func removeAll() {
        entries.removeAll()
        expiry.removeAll()
    }

    /// Removes expired keys, earliest deadline first, looking at most at `budget` heap entries.
    ///
    /// - Returns: the number of keys removed, and whether due entries remain (call again soon).
    mutating func sweep(budget: Int) -> (removed: Int, more: Bool) {
        let now = clock.nowMilliseconds
        var removed = 0
        var looked = 0
        while looked < budget, let first = expiry.first, first.deadline <= now {
            looked += 1
            let entry = expiry.removeFirst()
            // Stale heap entries (key deleted, re-set, or given another TTL) are dropped.
            if let current = entries[entry.key], current.deadline == entry.deadline {
                entries[entry.key] = nil
                removed += 1
            }
        }
        let more = expiry.first.map { $0.deadline <= now } ?? false
        return (removed, more)
    }
}
