/// Pending timers ordered by (deadline, sequence), each carrying a `Payload` (a loop's
/// ``LoopWork``, the simulated network's events): a sorted run in front of a binary min-heap,
/// with removal of any timer through a stable slot (O(1) in the run, O(log n) in the heap, in the
/// manner of libevent's `min_heap_idx`).
///
/// **The run.** A timer whose key is not below the key of the run's last timer joins the run, a
/// doubly linked list through the slots, in O(1); any other timer goes to the heap. The run is
/// therefore sorted, its first timer is its minimum, and the earliest timer of all is the earlier
/// of the run's first and the heap's root. This is the common shape of a loop's timers: timeouts
/// with one delay, scheduled one after the other, have nondecreasing deadlines, and equal delays
/// scheduled in one round share one deadline and differ only by sequence (libevent's "common
/// timeouts" serve the same shape with one list per delay). For them scheduling, cancelling and
/// firing are O(1) and never compare keys in a sift. A heap alone spends most of such a timer's
/// cancel in `siftDown` (W5: timers with one deadline, each then cancelled), every comparison
/// falling through to the sequence.
///
/// Two buffers:
/// - the heap itself holds small trivial entries (deadline, sequence, slot number), so a sift step
///   compares in place and moves 24 bytes with no retain/release;
/// - the slots hold each timer's payload and where it is: its entry's index in the heap, or its
///   neighbours in the run and its deadline. A slot number stays valid while the timer is
///   pending, which is what makes cancelling O(1) or O(log n): the slot says where the timer is,
///   no search needed. Freed slots go on a free list and are reused.
///
/// A slot is reused only for a timer with a new sequence number, so (slot, sequence) names one
/// timer forever: removing with a stale pair finds a different sequence and does nothing.
///
/// Memory stays at the high-water mark (no shrinking), which suits a loop's steady state.
/// A non-copyable struct: it owns its buffers, which its owner frees with ``deallocate()``.
///
/// Generic so that the loops and the simulated network share one ordered queue; the scheduling
/// core uses it as `TimerHeap<LoopWork>`, a concrete type, so its paths stay specialized. The
/// members are `@inlinable` (internals `@usableFromInline`) so that a user in another module
/// gets them specialized for its payload too, as ``RingBuffer`` is. `@usableFromInline` also so
/// that the inlined ``SchedulingCore/nextInRound()`` can read ``count``.
@usableFromInline
package struct TimerHeap<Payload>: ~Copyable {
    @usableFromInline
    struct Entry {
        @usableFromInline var deadline: UInt64
        @usableFromInline var sequence: UInt64
        @usableFromInline var slot: UInt32

        @inlinable
        init(deadline: UInt64, sequence: UInt64, slot: UInt32) {
            self.deadline = deadline
            self.sequence = sequence
            self.slot = slot
        }

        @inlinable
        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }

        /// Whether this entry's key is below (`deadline`, `sequence`).
        @inlinable
        @inline(__always)
        func precedes(deadline otherDeadline: UInt64, _ otherSequence: UInt64) -> Bool {
            deadline < otherDeadline || (deadline == otherDeadline && sequence < otherSequence)
        }
    }

    @usableFromInline
    struct Slot {
        /// The timer's payload; nil while the slot is free.
        @usableFromInline var payload: Payload?
        /// The sequence number of the timer in this slot (of the last one, when free).
        @usableFromInline var sequence: UInt64
        /// The timer's deadline while it is in the run (unused otherwise).
        @usableFromInline var deadline: UInt64 = 0
        /// Where the timer is: its entry's index in the heap (`>= 0`), or ``Slot/inRun``. While
        /// the slot is free it links the free list instead, encoded below zero: `-1` ends the
        /// list, `-(n + 2)` points to slot `n`.
        @usableFromInline var link = 0
        /// The previous and next slots in the run, ``Slot/none`` at its ends (while in the run).
        @usableFromInline var previous: UInt32 = Slot.none
        @usableFromInline var next: UInt32 = Slot.none

        /// The `link` of a timer in the run: below every free-list encoding of a slot number.
        @inlinable static var inRun: Int { Int.min }
        /// No slot, at the ends of the run.
        @inlinable static var none: UInt32 { UInt32.max }

        /// A new slot holding `payload`; where the timer is gets set where it is placed.
        @inlinable
        init(payload: consuming Payload, sequence: UInt64) {
            self.payload = payload
            self.sequence = sequence
        }

        /// An empty slot, added for a timer that ``TimerHeap/insert(_:deadline:sequence:)``
        /// puts in it next.
        @inlinable
        init() {
            payload = nil
            sequence = 0
        }

        /// Whether this timer's run key is below (`deadline`, `sequence`): a timer with that key
        /// may follow it in the run.
        @inlinable
        @inline(__always)
        func runKeyPrecedes(deadline otherDeadline: UInt64, _ otherSequence: UInt64) -> Bool {
            deadline < otherDeadline || (deadline == otherDeadline && sequence < otherSequence)
        }
    }

    // Internal rather than private from here on: `@inlinable` members may only reach
    // `@usableFromInline` declarations.

    /// Entries `0..<heapCount` are initialized; `Entry` is trivial, so moving, overwriting and
    /// freeing them needs no deinitialization. Read only below `heapCount`.
    @usableFromInline var heap: UnsafeMutablePointer<Entry>
    @usableFromInline var heapCapacity: Int
    /// The number of entries in the heap.
    @usableFromInline var heapCount = 0

    /// The first and last slots of the run, ``Slot/none`` when it is empty.
    @usableFromInline var runFirst = Slot.none
    @usableFromInline var runLast = Slot.none
    /// The number of timers in the run.
    @usableFromInline var runCount = 0
    /// The number of pending timers, in the run and in the heap.
    @usableFromInline package internal(set) var count = 0

    /// Raw slots: every read is below `slotCount` (``remove(slot:sequence:)`` checks a caller's
    /// slot number), and `deallocate()` deinitializes exactly `0..<slotCount`.
    @usableFromInline var slots: UnsafeMutablePointer<Slot>
    @usableFromInline var slotCapacity: Int
    /// Slots `0..<slotCount` are initialized (in use or on the free list).
    @usableFromInline var slotCount = 0
    /// Head of the free list, -1 when empty.
    @usableFromInline var firstFreeSlot = -1

    /// An empty heap with room for 16 timers.
    @inlinable
    package init() {
        heapCapacity = 16
        heap = .allocate(capacity: heapCapacity)
        slotCapacity = 16
        slots = .allocate(capacity: slotCapacity)
    }

    /// Releases the pending timers' payloads and frees the buffers; the owner's `deinit` calls
    /// it, once. Not a `deinit` of its own, for the reason given at ``RingBuffer``.
    @inlinable
    package mutating func deallocate() {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
        heap.deallocate()
        slotCount = 0
        count = 0
    }

    /// Whether no timer is pending.
    @inlinable
    package var isEmpty: Bool { count == 0 }

    /// The key of the earliest timer, if any.
    @inlinable
    package var minKey: (deadline: UInt64, sequence: UInt64)? {
        // One test for the common case of a loop with no timer (every hop asks).
        guard count > 0 else { return nil }
        if runCount > 0 {
            let first = slots + Int(runFirst)
            if heapCount == 0 || !heap.pointee.precedes(deadline: first.pointee.deadline, first.pointee.sequence) {
                return (first.pointee.deadline, first.pointee.sequence)
            }
        }
        return (heap.pointee.deadline, heap.pointee.sequence)
    }

    /// The payload of the earliest timer, if any, left in place.
    @inlinable
    package var minPayload: Payload? {
        guard count > 0 else { return nil }
        if runCount > 0 {
            let first = slots + Int(runFirst)
            if heapCount == 0 || !heap.pointee.precedes(deadline: first.pointee.deadline, first.pointee.sequence) {
                return first.pointee.payload
            }
        }
        return slots[Int(heap.pointee.slot)].payload
    }

    /// Adds a timer and returns its slot number, which stays valid until it is removed.
    ///
    /// Inlined whole where it is called: the common case (a free slot, the run's end: timeouts
    /// of one delay) is then a few stores in the caller. A new slot and the heap are calls.
    @inlinable
    @inline(__always)
    @discardableResult
    package mutating func insert(_ payload: consuming Payload, deadline: UInt64, sequence: UInt64) -> UInt32 {
        let slot = takeSlot()
        let entry = slots + Int(slot)
        // A taken slot is empty (free: ``freeSlot(_:)`` took its payload; or just added). Matched
        // here, the store below has no old payload to destroy (a call otherwise).
        guard case .none = entry.pointee.payload else { preconditionFailure("TimerHeap: a free slot holds a timer") }
        entry.pointee.payload = consume payload
        entry.pointee.sequence = sequence
        let last = runLast
        if last == Slot.none || (slots + Int(last)).pointee.runKeyPrecedes(deadline: deadline, sequence) {
            entry.pointee.deadline = deadline
            entry.pointee.link = Slot.inRun
            entry.pointee.previous = last
            entry.pointee.next = Slot.none
            if last == Slot.none { runFirst = slot } else { (slots + Int(last)).pointee.next = slot }
            runLast = slot
            runCount &+= 1
        } else {
            insertIntoHeap(Entry(deadline: deadline, sequence: sequence, slot: slot))
        }
        count &+= 1
        return slot
    }

    /// Removes the earliest timer and returns its payload; there must be one.
    @inlinable
    package mutating func removeMin() -> Payload {
        if runCount > 0 {
            let first = slots + Int(runFirst)
            if heapCount == 0 || !heap.pointee.precedes(deadline: first.pointee.deadline, first.pointee.sequence) {
                return removeFromRun(Int(runFirst))
            }
        }
        precondition(heapCount > 0, "TimerHeap.removeMin() with no timer")
        return remove(at: 0)
    }

    /// Removes the timer in `slot` if it is still the one with `sequence`, returning its payload.
    ///
    /// Inlined whole where it is called, as ``insert(_:deadline:sequence:)`` is; a timer in the
    /// heap is a call.
    @inlinable
    @inline(__always)
    package mutating func remove(slot: UInt32, sequence: UInt64) -> Payload? {
        let index = Int(slot)
        guard index < slotCount else { return nil }
        let entry = slots + index
        guard entry.pointee.sequence == sequence else { return nil }
        let link = entry.pointee.link
        if link == Slot.inRun { return removeFromRun(index) }
        if link >= 0 { return removeFromHeap(at: link) }
        return nil  // free: the timer already ran or was cancelled
    }

    // MARK: - Run

    /// Unlinks the timer in slot `index` from the run and frees its slot.
    @inlinable
    @inline(__always)
    mutating func removeFromRun(_ index: Int) -> Payload {
        let entry = slots + index
        let previous = entry.pointee.previous
        let next = entry.pointee.next
        if previous == Slot.none { runFirst = next } else { (slots + Int(previous)).pointee.next = next }
        if next == Slot.none { runLast = previous } else { (slots + Int(next)).pointee.previous = previous }
        runCount &-= 1
        return freeSlot(index)
    }

    // MARK: - Heap

    /// Adds `entry` to the heap.
    @inlinable
    @inline(never)
    mutating func insertIntoHeap(_ entry: Entry) {
        if heapCount == heapCapacity { growHeap() }
        heapCount += 1
        siftUp(entry, from: heapCount - 1)
    }

    /// ``remove(at:)``, out of line: the inlined ``remove(slot:sequence:)`` calls it.
    @inlinable
    @inline(never)
    mutating func removeFromHeap(at index: Int) -> Payload {
        remove(at: index)
    }

    @inlinable
    mutating func remove(at index: Int) -> Payload {
        let slot = Int(heap[index].slot)
        let payload = freeSlot(slot)
        heapCount -= 1
        if index < heapCount {
            // Fill the hole with the last entry, then restore the order in whichever direction it
            // is broken (up when the last entry precedes the hole's parent, down otherwise).
            let last = heap[heapCount]
            if index > 0 && last.precedes(heap[(index - 1) / 2]) {
                siftUp(last, from: index)
            } else {
                siftDown(last, from: index)
            }
        }
        return payload
    }

    /// Places `entry` at the hole `index`, moving parents down while it precedes them.
    @inlinable
    @inline(__always)
    mutating func siftUp(_ entry: Entry, from index: Int) {
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
    /// belongs near the bottom, so this spends one comparison per level instead of two.
    @inlinable
    @inline(__always)
    mutating func siftDown(_ entry: Entry, from index: Int) {
        var hole = index
        while true {
            let left = 2 * hole + 1
            guard left < heapCount else { break }
            var child = left
            let right = left + 1
            if right < heapCount && heap[right].precedes(heap[left]) { child = right }
            let childEntry = heap[child]
            heap[hole] = childEntry
            slots[Int(childEntry.slot)].link = hole
            hole = child
        }
        siftUp(entry, from: hole)
    }

    @inlinable
    mutating func growHeap() {
        let newCapacity = heapCapacity * 2
        let newHeap = UnsafeMutablePointer<Entry>.allocate(capacity: newCapacity)
        newHeap.moveInitialize(from: heap, count: heapCount)
        heap.deallocate()
        heap = newHeap
        heapCapacity = newCapacity
    }

    // MARK: - Slots

    /// The number of an empty slot for a new timer, taken off the free list or added. Free slots are reused first, so that
    /// the slots stay at the high-water mark of pending timers.
    @inlinable
    @inline(__always)
    mutating func takeSlot() -> UInt32 {
        let free = firstFreeSlot
        guard free >= 0 else { return addSlot() }
        // The free list's encoding (``Slot/link``): `-(n + 2)` points to slot `n`, `-1` ends it.
        firstFreeSlot = -2 &- (slots + free).pointee.link
        return UInt32(truncatingIfNeeded: free)
    }

    /// ``takeSlot()`` with the free list empty: a new empty slot at the end.
    @inlinable
    @inline(never)
    mutating func addSlot() -> UInt32 {
        precondition(slotCount < Int(UInt32.max), "More than 4 billion pending timers")
        if slotCount == slotCapacity { growSlots() }
        (slots + slotCount).initialize(to: Slot())
        slotCount += 1
        return UInt32(truncatingIfNeeded: slotCount - 1)
    }

    /// Takes the payload out of slot `index` and puts the slot on the free list.
    @inlinable
    @inline(__always)
    mutating func freeSlot(_ index: Int) -> Payload {
        let slot = slots + index
        let payload = slot.pointee.payload.take()!
        count &-= 1
        slot.pointee.link = -2 &- firstFreeSlot
        firstFreeSlot = index
        return payload
    }

    @inlinable
    mutating func growSlots() {
        let newCapacity = slotCapacity * 2
        let newSlots = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        newSlots.moveInitialize(from: slots, count: slotCount)
        slots.deallocate()
        slots = newSlots
        slotCapacity = newCapacity
    }
}
