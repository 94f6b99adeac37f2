/// A binary min-heap of (deadline, key): the keys with a time to live, earliest first.
///
/// Entries are not removed when a key is deleted or its TTL changes; the sweep pops an entry,
/// and removes the key only if the key's current deadline is that entry's (stale entries are
/// dropped). Each entry is 32 bytes and shares the key's storage with the dictionary.
struct ExpiryHeap {
    struct Entry {
        var deadline: Int64
        var key: StoreKey
    }

    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var first: Entry? { entries.first }

    mutating func removeAll() {
        entries.removeAll()
    }

    mutating func insert(deadline: Int64, key: StoreKey) {
        entries.append(Entry(deadline: deadline, key: key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() -> Entry {
        let top = entries[0]
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < entries.count else { break }
                var smallest = left
                if left + 1 < entries.count && entries[left + 1].deadline < entries[left].deadline {
                    smallest = left + 1
                }
                guard entries[smallest].deadline < entries[parent].deadline else { break }
                entries.swapAt(smallest, parent)
                parent = smallest
            }
        }
        return top
    }
}
