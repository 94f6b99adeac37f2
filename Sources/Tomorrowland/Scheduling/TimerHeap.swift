/// A binary min-heap of timers ordered by (deadline, sequence), with O(log n) removal of any
/// timer through a stable slot, in the manner of libevent's `min_heap_idx`.
///
/// Two buffers:
/// - the heap itself holds small trivial entries (deadline, sequence, slot number), so a sift step
///   compares in place and moves 24 bytes with no retain/release;
/// - the slots hold each timer's work and its current position in the heap. A slot number stays
///   valid while the timer is pending, which is what makes cancelling O(log n): the slot says
///   where the entry is, no search needed. Freed slots go on a free list and are reused.
///
/// A slot is reused only for a timer with a new sequence number, so (slot, sequence) names one
/// timer forever: removing with a stale pair finds a different sequence and does nothing.
///
/// Memory stays at the high-water mark (no shrinking), which suits a loop's steady state.
/// A non-copyable struct: it owns its buffers.
struct TimerHeap: ~Copyable {
    struct Entry {
        var deadline: UInt64
        var sequence: UInt64
        var slot: UInt32

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }
    }

    struct Slot {
        /// The timer's work; nil while the slot is free.
        var work: LoopWork?
        /// The sequence number of the timer in this slot (of the last one, when free).
        var sequence: UInt64
        /// The entry's index in the heap while the slot is in use. While the slot is free it
        /// links the free list instead, encoded below zero: `-1` ends the list, `-(n + 2)` points
        /// to slot `n`.
        var link: Int
    }

    private var heap: UnsafeMutablePointer<Entry>
    private var heapCapacity: Int
    private(set) var count = 0

    private var slots: UnsafeMutablePointer<Slot>
    private var slotCapacity: Int
    /// Slots `0..<slotCount` are initialized (in use or on the free list).
    private var slotCount = 0
    /// Head of the free list, -1 when empty.
    private var firstFreeSlot = -1

    init() {
        heapCapacity = 16
        heap = .allocate(capacity: heapCapacity)
        slotCapacity = 16
        slots = .allocate(capacity: slotCapacity)
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
        heap.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The key of the earliest timer, if any.
    var minKey: (deadline: UInt64, sequence: UInt64)? {
        guard count > 0 else { return nil }
        return (heap.pointee.deadline, heap.pointee.sequence)
    }

    /// Adds a timer and returns its slot number, which stays valid until it is removed.
    mutating func insert(_ work: LoopWork, deadline: UInt64, sequence: UInt64) -> UInt32 {
        let slot = allocateSlot(work, sequence: sequence)
        if count == heapCapacity { growHeap() }
        count += 1
        siftUp(Entry(deadline: deadline, sequence: sequence, slot: slot), from: count - 1)
        return slot
    }

    /// Removes the earliest timer and returns its work; the heap must not be empty.
    mutating func removeMin() -> LoopWork {
        precondition(count > 0, "TimerHeap.removeMin() on an empty heap")
        return remove(at: 0)
    }

    /// Removes the timer in `slot` if it is still the one with `sequence`, returning its work.
    mutating func remove(slot: UInt32, sequence: UInt64) -> LoopWork? {
        let index = Int(slot)
        guard index < slotCount else { return nil }
        let entry = slots + index
        guard entry.pointee.link >= 0, entry.pointee.sequence == sequence else { return nil }
        return remove(at: entry.pointee.link)
    }

    // MARK: - Heap

    private mutating func remove(at index: Int) -> LoopWork {
        let slot = Int(heap[index].slot)
        let work = freeSlot(slot)
        count -= 1
        if index < count {
            // Fill the hole with the last entry, then restore the order in whichever direction it
            // is broken (up when the last entry precedes the hole's parent, down otherwise).
            let last = heap[count]
            if index > 0 && last.precedes(heap[(index - 1) / 2]) {
                siftUp(last, from: index)
            } else {
                siftDown(last, from: index)
            }
        }
        return work
    }

    /// Places `entry` at the hole `index`, moving parents down while it precedes them.
    @inline(__always)
    private mutating func siftUp(_ entry: Entry, from index: Int) {
        var hole = index
        while hole > 0 {
            let parent = (hole - 1) / 2
            let parentEntry = heap[parent]
            guard entry.precedes(parentEntry) else { break }
            heap[hole] = parentEntry
            slots[Int(parentEntry.slot)].link = hole
            hole = parent
        }
        heap[hole] = entry
        slots[Int(entry.slot)].link = hole
    }

    /// Places `entry` at the hole `index` in the subtree below it: walks the hole down to a leaf
    /// along the earlier children, then sifts `entry` up from there.
    ///
    /// Bottom-up (Floyd): the entry that fills a hole is the heap's last one, which usually
    /// belongs near the bottom, so this spends one comparison per level instead of two. With the
    /// exclusivity change it took W5 from about 1,040 to 785 instructions per timer.
    @inline(__always)
    private mutating func siftDown(_ entry: Entry, from index: Int) {
        var hole = index
        while true {
            let left = 2 * hole + 1
            guard left < count else { break }
            var child = left
            let right = left + 1
            if right < count && heap[right].precedes(heap[left]) { child = right }
            let childEntry = heap[child]
            heap[hole] = childEntry
            slots[Int(childEntry.slot)].link = hole
            hole = child
        }
        siftUp(entry, from: hole)
    }

    private mutating func growHeap() {
        let newCapacity = heapCapacity * 2
        let newHeap = UnsafeMutablePointer<Entry>.allocate(capacity: newCapacity)
        newHeap.moveInitialize(from: heap, count: count)
        heap.deallocate()
        heap = newHeap
        heapCapacity = newCapacity
    }

    // MARK: - Slots

    private mutating func allocateSlot(_ work: LoopWork, sequence: UInt64) -> UInt32 {
        if firstFreeSlot >= 0 {
            let index = firstFreeSlot
            let slot = slots + index
            firstFreeSlot = -slot.pointee.link - 2
            slot.pointee.work = work
            slot.pointee.sequence = sequence
            // `link` is set by the sift that places the entry.
            return UInt32(truncatingIfNeeded: index)
        }
        precondition(slotCount < Int(UInt32.max), "More than 4 billion pending timers")
        if slotCount == slotCapacity { growSlots() }
        (slots + slotCount).initialize(to: Slot(work: work, sequence: sequence, link: 0))
        slotCount += 1
        return UInt32(truncatingIfNeeded: slotCount - 1)
    }

    /// Takes the work out of slot `index` and puts the slot on the free list.
    private mutating func freeSlot(_ index: Int) -> LoopWork {
        let slot = slots + index
        let work = slot.pointee.work.take()!
        slot.pointee.link = -firstFreeSlot - 2
        firstFreeSlot = index
        return work
    }

    private mutating func growSlots() {
        let newCapacity = slotCapacity * 2
        let newSlots = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        newSlots.moveInitialize(from: slots, count: slotCount)
        slots.deallocate()
        slots = newSlots
        slotCapacity = newCapacity
    }
}
