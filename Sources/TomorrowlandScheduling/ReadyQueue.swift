/// One item of ``SchedulingCore``'s ready FIFO: the work and the key it was given (the core's
/// time when it was queued, and its sequence number), so that the core can merge it with due
/// timers. Keys only grow from the back to the front, because the core's time never goes
/// backwards and sequence numbers come from one counter.
@usableFromInline
struct ReadyEntry {
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

/// The FIFO of work that is ready to run: a ``RingBuffer`` of keyed entries.
@usableFromInline
typealias ReadyQueue = RingBuffer<ReadyEntry>

extension RingBuffer where Element == ReadyEntry {
    /// The deadline and sequence of the first entry, if any.
    var firstKey: (deadline: UInt64, sequence: UInt64)? {
        guard count > 0 else { return nil }
        let entry = storage + head
        return (entry.pointee.deadline, entry.pointee.sequence)
    }

    /// Queues `work` with its key.
    ///
    /// Inlined into ``SchedulingCore/enqueue(_:)``, its one caller on the hot path, and through it
    /// into the loops: every hop to a loop (W1) paid the call. Written out rather than through
    /// ``RingBuffer/append(_:)``, so that the entry is built in its slot: built first and then
    /// moved in, it costs a copy more per hop.
    @inlinable
    @inline(__always)
    mutating func append(_ work: consuming LoopWork, deadline: UInt64, sequence: UInt64) {
        // Growing is a call at the end of its own branch, so that the common path needs none.
        guard count != capacity else {
            growAndAppend(consume work, deadline: deadline, sequence: sequence)
            return
        }
        (storage + ((head &+ count) & (capacity &- 1))).initialize(
            to: ReadyEntry(work: consume work, deadline: deadline, sequence: sequence))
        count &+= 1
    }

    /// ``append(_:deadline:sequence:)`` on a full queue.
    @usableFromInline
    @inline(never)
    mutating func growAndAppend(_ work: consuming LoopWork, deadline: UInt64, sequence: UInt64) {
        append(ReadyEntry(work: consume work, deadline: deadline, sequence: sequence))
    }

    /// Removes and returns the first entry's work; the queue must not be empty.
    ///
    /// Inlinable for ``SchedulingCore/nextInRound()``, inlined into the loops.
    @inlinable
    @inline(__always)
    mutating func removeFirstWork() -> LoopWork {
        removeFirst().work
    }
}
