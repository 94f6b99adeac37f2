/// The FIFO of work that is ready to run, as a growable ring buffer.
///
/// Each entry keeps the key it was given by ``SchedulingCore`` (the core's time when it was
/// queued, and its sequence number) so that the core can merge it with due timers. Keys only
/// grow from the back to the front, because the core's time never goes backwards and sequence
/// numbers come from one counter.
///
/// A non-copyable struct: it owns its buffer, and copying it would double-free.
struct ReadyQueue: ~Copyable {
    struct Entry {
        var work: LoopWork
        var deadline: UInt64
        var sequence: UInt64
    }

    /// Room for `capacity` entries; `capacity` is a power of two so that wrapping is a mask.
    private var storage: UnsafeMutablePointer<Entry>
    private var capacity: Int
    /// Index of the first live entry.
    private var head = 0
    /// Number of live entries, starting at `head` and wrapping.
    private(set) var count = 0

    init() {
        capacity = 16
        storage = .allocate(capacity: capacity)
    }

    deinit {
        // Live entries form at most two runs: from `head` to the end, then from the start.
        let firstRun = min(count, capacity - head)
        (storage + head).deinitialize(count: firstRun)
        storage.deinitialize(count: count - firstRun)
        storage.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The deadline and sequence of the first entry, if any.
    var firstKey: (deadline: UInt64, sequence: UInt64)? {
        guard count > 0 else { return nil }
        let entry = storage + head
        return (entry.pointee.deadline, entry.pointee.sequence)
    }

    // Inlined into `SchedulingCore.enqueue`, its one caller on the hot path: every hop to a
    // loop (W1) paid the call.
    @inline(__always)
    mutating func append(_ work: consuming LoopWork, deadline: UInt64, sequence: UInt64) {
        if count == capacity { grow() }
        (storage + ((head + count) & (capacity - 1))).initialize(
            to: Entry(work: consume work, deadline: deadline, sequence: sequence))
        count += 1
    }

    /// Removes and returns the first entry's work; the queue must not be empty.
    mutating func removeFirst() -> LoopWork {
        precondition(count > 0, "ReadyQueue.removeFirst() on an empty queue")
        let entry = (storage + head).move()
        head = (head + 1) & (capacity - 1)
        count -= 1
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
