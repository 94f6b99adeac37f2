/// The FIFO of work that is ready to run, as a growable ring buffer.
///
/// Each entry keeps the key it was given by ``SchedulingCore`` (the core's time when it was
/// queued, and its sequence number) so that the core can merge it with due timers. Keys only
/// grow from the back to the front, because the core's time never goes backwards and sequence
/// numbers come from one counter.
///
/// A non-copyable struct: it owns its buffer, and copying it would double-free; its owner frees
/// it with ``deallocate()``.
///
/// `@usableFromInline`, with its append path `@inlinable`: the loops live in other modules, and
/// queueing a promise job from the loop's own thread (every hop of a chain on a loop) otherwise
/// paid two calls across the module boundary (see ``SchedulingCore/enqueue(_:)``).
@usableFromInline
struct ReadyQueue: ~Copyable {
    @usableFromInline
    struct Entry {
        @usableFromInline var work: LoopWork
        @usableFromInline var deadline: UInt64
        @usableFromInline var sequence: UInt64

        @inlinable
        init(work: consuming LoopWork, deadline: UInt64, sequence: UInt64) {
            self.work = work
            self.deadline = deadline
            self.sequence = sequence
        }
    }

    /// Room for `capacity` entries; `capacity` is a power of two so that wrapping is a mask.
    @usableFromInline var storage: UnsafeMutablePointer<Entry>
    @usableFromInline var capacity: Int
    /// Index of the first live entry.
    @usableFromInline var head = 0
    /// Number of live entries, starting at `head` and wrapping.
    @usableFromInline var count = 0

    init() {
        capacity = 16
        storage = .allocate(capacity: capacity)
    }

    /// Releases the live entries and frees the buffer; the owner's `deinit` calls it, once.
    ///
    /// Not a `deinit` of its own: a non-copyable stored property reached from `@inlinable` code
    /// (``SchedulingCore/enqueue(_:)``) must not have one that is not inlinable (the 6.3
    /// optimiser asserts while inlining the property's setter), and a `deinit` cannot be.
    mutating func deallocate() {
        // Live entries form at most two runs: from `head` to the end, then from the start.
        let firstRun = min(count, capacity - head)
        (storage + head).deinitialize(count: firstRun)
        storage.deinitialize(count: count - firstRun)
        storage.deallocate()
        count = 0
    }

    var isEmpty: Bool { count == 0 }

    /// The deadline and sequence of the first entry, if any.
    var firstKey: (deadline: UInt64, sequence: UInt64)? {
        guard count > 0 else { return nil }
        let entry = storage + head
        return (entry.pointee.deadline, entry.pointee.sequence)
    }

    // Inlined into `SchedulingCore.enqueue`, its one caller on the hot path, and through it into
    // the loops: every hop to a loop (W1) paid the call. Wrapping arithmetic: `count` never
    // exceeds `capacity`, and the index is masked.
    @inlinable
    @inline(__always)
    mutating func append(_ work: consuming LoopWork, deadline: UInt64, sequence: UInt64) {
        // Growing is a call at the end of its own branch, so that the common path needs none
        // (and saves no registers for one).
        guard count != capacity else {
            growAndAppend(consume work, deadline: deadline, sequence: sequence)
            return
        }
        (storage + ((head &+ count) & (capacity &- 1))).initialize(
            to: Entry(work: consume work, deadline: deadline, sequence: sequence))
        count &+= 1
    }

    /// ``append(_:deadline:sequence:)`` on a full queue.
    @usableFromInline
    @inline(never)
    mutating func growAndAppend(_ work: consuming LoopWork, deadline: UInt64, sequence: UInt64) {
        grow()
        (storage + ((head &+ count) & (capacity &- 1))).initialize(
            to: Entry(work: consume work, deadline: deadline, sequence: sequence))
        count &+= 1
    }

    /// Removes and returns the first entry's work; the queue must not be empty.
    ///
    /// Inlinable for ``SchedulingCore/nextInRound()``, inlined into the loops.
    @inlinable
    @inline(__always)
    mutating func removeFirst() -> LoopWork {
        precondition(count > 0, "ReadyQueue.removeFirst() on an empty queue")
        let entry = (storage + head).move()
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return entry.work
    }

    private mutating func grow() {
        let newCapacity = capacity * 2
        let newStorage = UnsafeMutablePointer<Entry>.allocate(capacity: newCapacity)
        // Unwrap the ring into the front of the new buffer: entries move without retain/release.
        let firstRun = min(count, capacity - head)
        newStorage.moveInitialize(from: storage + head, count: firstRun)
        (newStorage + firstRun).moveInitialize(from: storage, count: count - firstRun)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
        head = 0
    }
}
