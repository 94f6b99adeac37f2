/// The scheduling core shared by every loop: a FIFO of ready work, a heap of timers, one sequence
/// counter, and the one function that decides what runs next.
///
/// `EventLoop` (libevent, monotonic clock) and `TestLoop` (virtual clock) both keep one of these,
/// so work runs in the same order in tests and in production. The core never runs work and never
/// reads a clock: the owner passes the time and runs what ``popNext(until:)`` hands back.
///
/// ## Time
///
/// Times are `UInt64` nanoseconds on the owner's clock. The core keeps ``currentTime``, which
/// never goes backwards: it moves to each item's deadline as that item is handed out, and to the
/// target once nothing more is due.
///
/// ## Order
///
/// Every pending item has a key (deadline, sequence). The sequence comes from one counter shared
/// by ready work and timers, so it records the order of the calls that queued them. Ready work
/// gets ``currentTime`` as its deadline (it is due now); a timer gets the deadline it asks for,
/// raised to ``currentTime`` if earlier. Work is handed out in increasing key order, among the
/// items whose deadline is at or before the target. That single rule gives all the others:
///
/// - ready work runs in FIFO order, and timers with equal deadlines in scheduling order;
/// - ready work and due timers interleave by key: a timer that came due at time *t* runs before
///   work queued after it at time *t*, and after work queued before *t*;
/// - work queued or scheduled while a step runs, and due at or before the target, runs in the same
///   ``runDue(until:budget:_:)`` call (or the same round of ``popNext(until:)``), **after** every
///   item that was already due at that instant: its key carries a later sequence and a deadline
///   no earlier than ``currentTime``;
/// - nothing ever runs re-entrantly: queueing only records the work.
///
/// With a budget, a round can stop early; the next round resumes with exactly the items, and the
/// order, that the unbudgeted round would have used.
///
/// ## Cost
///
/// Queueing ready work is O(1) amortised. Scheduling and cancelling a timer are O(log n) with no
/// search: a timer's ``TimerID`` names a slot that knows the timer's place in the heap. Cancelled
/// timers leave the heap at once and their work is handed back to be released (no lazy deletion).
///
/// - Important: Not thread-safe. One thread owns a core at a time (a loop's own thread); the
///   owner adds whatever queue or lock it needs for calls from other threads, and must not hold
///   a lock while running the work it gets back.
package final class SchedulingCore {
    /// Names one scheduled timer, for ``SchedulingCore/cancel(_:)``.
    ///
    /// A plain value: cancelling with an identifier whose timer already ran or was cancelled does
    /// nothing, even after its slot was reused, because the sequence differs.
    package struct TimerID: Hashable, Sendable {
        package let slot: UInt32
        package let sequence: UInt64
    }

    /// The core's time, in nanoseconds on the owner's clock: the deadline of the item handed out
    /// last, or the target of the last round that completed, whichever is later.
    @exclusivity(unchecked) package private(set) var currentTime: UInt64

    // Unchecked exclusivity, here and below: every access is one short call into a queue or heap
    // method, or a plain read or write, that runs no user code (work is handed back, never
    // released or run inside), so accesses cannot overlap. The dynamic checks cost about 130
    // instructions per timer (callgrind, W5 shape) and 150 per loop hop (W1).
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0
    @exclusivity(unchecked) private var ready = ReadyQueue()
    @exclusivity(unchecked) private var timers = TimerHeap()

    /// Creates an empty core whose time starts at `currentTime`.
    package init(currentTime: UInt64 = 0) {
        self.currentTime = currentTime
    }

    /// The number of queued ready items.
    package var readyCount: Int { ready.count }

    /// The number of pending timers.
    package var timerCount: Int { timers.count }

    /// The number of pending items, ready or timers.
    package var pendingCount: Int { ready.count + timers.count }

    /// Whether nothing is pending.
    package var isEmpty: Bool { ready.isEmpty && timers.isEmpty }

    /// The deadline of the earliest pending timer, ignoring ready work.
    package var nextTimerDeadline: UInt64? { timers.minKey?.deadline }

    /// When the next item is due: ``currentTime`` (or earlier) while ready work is queued, the
    /// earliest timer's deadline otherwise, nil when nothing is pending. A loop waits until then.
    package var nextDeadline: UInt64? {
        if let readyKey = ready.firstKey { return readyKey.deadline }
        return timers.minKey?.deadline
    }

    /// Queues `work` to run now, after everything already due now.
    package func enqueue(_ work: consuming LoopWork) {
        let sequence = nextSequence
        nextSequence &+= 1
        ready.append(consume work, deadline: currentTime, sequence: sequence)
    }

    /// Schedules `work` at `deadline` (raised to ``currentTime`` if earlier) and returns the
    /// identifier that cancels it.
    package func schedule(at deadline: UInt64, _ work: LoopWork) -> TimerID {
        let sequence = nextSequence
        nextSequence &+= 1
        let slot = timers.insert(work, deadline: max(deadline, currentTime), sequence: sequence)
        return TimerID(slot: slot, sequence: sequence)
    }

    /// Cancels a pending timer: removes it in O(log n) and hands its work back.
    ///
    /// Releasing the work runs the deinitializers of what it captured, which may be user code (a
    /// resolver that cancels its promise, say), so an owner that calls this under a lock keeps
    /// the returned work alive until after unlocking.
    ///
    /// - Returns: The timer's work if it was pending, nil if it already ran or was cancelled.
    @discardableResult
    package func cancel(_ id: TimerID) -> LoopWork? {
        timers.remove(slot: id.slot, sequence: id.sequence)
    }

    /// Removes and returns the next item due at or before `target`, in key order, moving
    /// ``currentTime`` to its deadline; returns nil when nothing more is due, after moving
    /// ``currentTime`` to `target`.
    ///
    /// This is the decision both loops make, one item at a time. A `target` earlier than
    /// ``currentTime`` means ``currentTime``: time never goes backwards.
    package func popNext(until target: UInt64) -> LoopWork? {
        let target = max(target, currentTime)
        let timerKey = timers.minKey
        if let readyKey = ready.firstKey {
            // Ready work is always due (its deadline is at most currentTime).
            if let timerKey, timerKey.deadline <= target,
                timerKey.deadline < readyKey.deadline
                    || (timerKey.deadline == readyKey.deadline && timerKey.sequence < readyKey.sequence)
            {
                currentTime = max(currentTime, timerKey.deadline)
                return timers.removeMin()
            }
            return ready.removeFirst()
        }
        if let timerKey, timerKey.deadline <= target {
            currentTime = max(currentTime, timerKey.deadline)
            return timers.removeMin()
        }
        currentTime = target
        return nil
    }

    /// Runs one round: hands every item due at or before `target` to `perform`, in key order,
    /// including items that `perform` queues while the round runs (see the type's ordering rules).
    ///
    /// `perform` is called on the calling thread, with no access to the core in progress: it may
    /// queue, schedule and cancel freely.
    ///
    /// - Parameters:
    ///   - target: The time to reach, on the owner's clock.
    ///   - budget: The most items to hand out in this round, so that a loop can poll I/O between
    ///     rounds when work keeps queueing more work.
    ///   - perform: Runs one item.
    /// - Returns: `true` when the round completed (nothing due at or before `target` remains and
    ///   ``currentTime`` has reached it), `false` when the budget ran out first.
    @discardableResult
    package func runDue(until target: UInt64, budget: Int = .max, _ perform: (LoopWork) -> Void) -> Bool {
        var remaining = budget
        while remaining > 0 {
            guard let work = popNext(until: target) else { return true }
            remaining -= 1
            perform(work)
        }
        return false
    }

    /// Removes every pending timer and hands their work back in key order, for shutdown.
    ///
    /// Ready work stays queued. As with ``cancel(_:)``, release the returned work outside any lock.
    @discardableResult
    package func removeAllTimers() -> [LoopWork] {
        var removed: [LoopWork] = []
        removed.reserveCapacity(timers.count)
        while !timers.isEmpty { removed.append(timers.removeMin()) }
        return removed
    }

    /// Removes all ready work and hands it back in FIFO order.
    ///
    /// As with ``cancel(_:)``, release the returned work outside any lock.
    @discardableResult
    package func removeAllReady() -> [LoopWork] {
        var removed: [LoopWork] = []
        removed.reserveCapacity(ready.count)
        while !ready.isEmpty { removed.append(ready.removeFirst()) }
        return removed
    }
}
