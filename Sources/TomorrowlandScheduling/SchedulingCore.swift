import Tomorrowland

// Why a module of its own: `EventLoop` (TomorrowlandLoop), `TestLoop` (TomorrowlandTesting) and
// `NIOEventLoopExecutor` (TomorrowlandNIO) share this engine, and none of them may depend on
// another (TomorrowlandTesting must build without libevent; TomorrowlandLoop must not ship test
// doubles). The promise core never uses it, so it depends on the core (for `PromiseJob`,
// `PromiseTimerJob`, `PromiseTimerID`, `LockedValue`), not the reverse. It is a target, not a
// product: the loops import it `package` or `internal`, so no public API shows its types.
// Everything the loops' hot paths call is `@inlinable` on `@usableFromInline` types, which is
// how they reach it across the module boundary (see ``SchedulingCore/enqueue(_:)``).

/// The scheduling policy of every loop, written once: a FIFO of ready work, a heap of timers, one
/// sequence counter, rounds, and the one function that decides what runs next.
///
/// `EventLoop` (libevent, monotonic clock) and `TestLoop` (virtual clock) both keep one of these
/// and run what it hands back with ``LoopWork/run(asTaskExecutor:)``, so work runs in the same
/// order in tests and in production; only the clock and the waiting differ. The core never runs
/// work and never reads a clock: the owner passes the time and runs what ``nextInRound()`` hands
/// back.
///
/// ## Rounds
///
/// A loop works in **rounds**. A round starts when the loop looks at its clock
/// (``beginRound(at:)``): an `EventLoop` at every tick, reading the monotonic clock once; a
/// `TestLoop` at the current virtual time and then at each timer deadline it advances to. The round
/// hands out, one at a time, every item that is due at that time, including items queued while the
/// round runs that are due then too; it ends when none is left (``nextInRound()`` returns nil).
/// ``currentTime`` is the time of the round: it does not move while the round runs, and never goes
/// backwards.
///
/// ## Order
///
/// Every pending item has a key (deadline, sequence). The sequence comes from one counter shared
/// by ready work and timers, so it records the order of the calls that queued them. Ready work
/// gets ``currentTime`` as its deadline (it is due now); a timer gets the deadline it asks for,
/// raised to ``currentTime`` if earlier. A round hands out the items whose deadline is at or before
/// ``currentTime`` in increasing key order. That single rule gives the others:
///
/// - ready work runs in FIFO order, and timers with equal deadlines in scheduling order;
/// - the timers that are due when the loop looks run in (deadline, sequence) order, **before** the
///   work their callbacks submit: that work is keyed at the round's time, with a later sequence;
/// - a timer with a zero delay (a deadline at or before ``currentTime``) joins the ready FIFO behind
///   the work already queued, and ahead of the work queued after it;
/// - a delay counts from the round's time when scheduled from work the round runs
///   (``deadline(after:)``), so equal delays scheduled in one round share one deadline;
/// - nothing ever runs re-entrantly: queueing only records the work.
///
/// A loop may cut a round short (a budget, a stop request): the next round resumes with exactly
/// the items, and the order, that the uncut round would have used, plus the timers that came due
/// in between, after them.
///
/// ## Cost
///
/// Queueing ready work is O(1) amortised. Scheduling and cancelling a timer are O(log n) with no
/// search, and O(1) for timers scheduled in key order (equal delays, or growing ones, such as
/// timeouts): a timer's `PromiseTimerID` names a slot that knows the timer's place. Cancelled timers
/// leave at once and their work is handed back to be released (no lazy deletion).
///
/// - Important: Not thread-safe. One thread owns a core at a time (a loop's own thread); the
///   owner adds whatever queue or lock it needs for calls from other threads, and must not hold
///   a lock while running the work it gets back.
///
/// `@usableFromInline`, so that its `@inlinable` members reach the loops' modules: a `package`
/// type that is not is not serialized for them, and they call instead.
@usableFromInline
package final class SchedulingCore {
    /// The core's time, in nanoseconds on the owner's clock: the time of the current round, or of
    /// the last one.
    @exclusivity(unchecked) @usableFromInline package private(set) var currentTime: UInt64

    /// Whether a round is in progress: between ``beginRound(at:)`` and the ``nextInRound()`` that
    /// returns nil (or ``endRound()``).
    @exclusivity(unchecked) @usableFromInline package private(set) var isInRound = false

    // Unchecked exclusivity, here and below: every access is one short call into a queue or heap
    // method, or a plain read or write, that runs no user code (work is handed back, never
    // released or run inside), so accesses cannot overlap. The dynamic checks would be a large
    // share of every timer's and every loop hop's cost.
    // `@usableFromInline` (internal), for the inlined ``enqueue(_:)`` and ``nextInRound()``.
    @exclusivity(unchecked) @usableFromInline var nextSequence: UInt64 = 0
    @exclusivity(unchecked) @usableFromInline var ready = ReadyQueue()
    @exclusivity(unchecked) @usableFromInline var timers = TimerHeap<LoopWork>()
    /// The delay that ``nanoseconds(of:)`` converted last (its attoseconds: `Duration`'s `==` is
    /// a call into the standard library), and what it gave.
    @exclusivity(unchecked) @usableFromInline var lastDelay: Int128 = 0
    @exclusivity(unchecked) @usableFromInline var lastDelayNanoseconds: UInt64 = 0

    /// Creates an empty core whose time starts at `currentTime`.
    package init(currentTime: UInt64 = 0) {
        self.currentTime = currentTime
    }

    deinit {
        ready.deallocate()
        timers.deallocate()
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
    ///
    /// Inlinable: every promise job a loop's own thread queues (each hop of a chain on a loop)
    /// comes through here from the loop's module, and as two calls across the module boundary
    /// every hop would pay them.
    @inlinable
    @inline(__always)
    package func enqueue(_ work: consuming LoopWork) {
        let sequence = nextSequence
        nextSequence &+= 1
        ready.append(consume work, deadline: currentTime, sequence: sequence)
    }

    /// Schedules `work` at `deadline` (raised to ``currentTime`` if earlier) and returns the
    /// identifier that cancels it.
    ///
    /// The identifier is the promise core's `PromiseTimerID` (the timer's slot and its sequence
    /// number), so that a promise timer stored with `PromiseExecutor.storeTimer` is named by what
    /// this returns, with no conversion. A plain value: cancelling with an identifier whose timer
    /// already ran or was cancelled does nothing, even after its slot was reused, because the
    /// sequence differs.
    ///
    /// Inlined, with the heap's insertion: every timer a loop stores pays this, and as calls
    /// across the module boundary it would pay each call.
    @inlinable
    @inline(__always)
    package func schedule(at deadline: UInt64, _ work: consuming LoopWork) -> PromiseTimerID {
        let sequence = nextSequence
        nextSequence &+= 1
        // `consuming` down to the slot: the caller's reference moves in, no retain and release.
        let slot = timers.insert(consume work, deadline: max(deadline, currentTime), sequence: sequence)
        return PromiseTimerID(slot: slot, sequence: sequence)
    }

    /// Cancels a pending timer: removes it in O(log n) and hands its work back.
    ///
    /// Releasing the work runs the deinitializers of what it captured, which may be user code (a
    /// resolver that cancels its promise, say), so an owner that calls this under a lock keeps
    /// the returned work alive until after unlocking.
    ///
    /// Inlined, with the heap's removal, as ``schedule(at:_:)`` is.
    ///
    /// - Returns: The timer's work if it was pending, nil if it already ran or was cancelled.
    @inlinable
    @inline(__always)
    @discardableResult
    package func cancel(_ id: PromiseTimerID) -> LoopWork? {
        timers.remove(slot: id.slot, sequence: id.sequence)
    }

    /// `delay.schedulingNanoseconds`, converted once for a run of timers with one delay (a
    /// server's request timeouts, a loop's keep-alive): the core remembers the last delay and
    /// its conversion. Only on the owner's thread (under its lock), like every member.
    @inlinable
    @inline(__always)
    package func nanoseconds(of delay: Duration) -> UInt64 {
        if delay.attoseconds == lastDelay { return lastDelayNanoseconds }
        return convertAndRemember(delay)
    }

    /// ``nanoseconds(of:)`` for a delay other than the last one.
    @usableFromInline
    func convertAndRemember(_ delay: Duration) -> UInt64 {
        let nanoseconds = delay.schedulingNanoseconds
        lastDelay = delay.attoseconds
        lastDelayNanoseconds = nanoseconds
        return nanoseconds
    }

    /// The deadline of a timer scheduled now with a delay of `nanoseconds`: ``currentTime`` plus
    /// the delay, saturating.
    ///
    /// Inside a round that is the round's time, not a fresh reading of the clock, so timers with
    /// equal delays scheduled by one round share a deadline (as libuv and libevent count from the
    /// time their loop cached at wake-up).
    @inlinable
    @inline(__always)
    package func deadline(after nanoseconds: UInt64) -> UInt64 {
        let (sum, overflow) = currentTime.addingReportingOverflow(nanoseconds)
        return overflow ? .max : sum
    }

    /// ``deadline(after:)`` while a round is in progress; nil outside a round, where the owner
    /// reads its clock instead.
    ///
    /// The owner's question in one member: read directly from another module, ``isInRound`` is
    /// not covered by its unchecked exclusivity, and every timer would pay the dynamic check;
    /// inlined from here, the read keeps it.
    @inlinable
    @inline(__always)
    package func deadlineInRound(after nanoseconds: UInt64) -> UInt64? {
        isInRound ? deadline(after: nanoseconds) : nil
    }

    /// The loop looked at its clock and read `time`: starts a round there. A `time` earlier than
    /// ``currentTime`` means ``currentTime``: time never goes backwards.
    @inline(__always)
    package func beginRound(at time: UInt64) {
        if time > currentTime { currentTime = time }
        isInRound = true
    }

    /// Removes and returns the next item of the round in progress: the item with the smallest key
    /// among those due at ``currentTime``. Returns nil, and ends the round, when none is left.
    ///
    /// This is the decision both loops make, one item at a time.
    ///
    /// Inlinable, with the case of a loop that has no timer at all (every hop of a chain on a
    /// loop) written first: there the rule hands out the first ready entry, with no key to
    /// compare. The general case stays a call.
    @inlinable
    @inline(__always)
    package func nextInRound() -> LoopWork? {
        if timers.count == 0 && ready.count > 0 { return ready.removeFirstWork() }
        return nextInRoundMergingTimers()
    }

    /// ``nextInRound()`` when a timer is pending or nothing is ready: merges the two by key.
    @usableFromInline
    func nextInRoundMergingTimers() -> LoopWork? {
        let now = currentTime
        let timerKey = timers.minKey
        if let readyKey = ready.firstKey {
            // Ready work is always due (its deadline is at most currentTime).
            if let timerKey, timerKey.deadline <= now,
                timerKey.deadline < readyKey.deadline
                    || (timerKey.deadline == readyKey.deadline && timerKey.sequence < readyKey.sequence)
            {
                return timers.removeMin()
            }
            return ready.removeFirstWork()
        }
        if let timerKey, timerKey.deadline <= now {
            return timers.removeMin()
        }
        isInRound = false
        return nil
    }

    /// Ends the round in progress early (a budget ran out, a stop or a shutdown was requested);
    /// what it had left runs first in the next round.
    package func endRound() {
        isInRound = false
    }

    /// Whether an item is due at ``currentTime``: the next ``nextInRound()`` would return one.
    package var hasWorkDueNow: Bool {
        if !ready.isEmpty { return true }
        guard let timerKey = timers.minKey else { return false }
        return timerKey.deadline <= currentTime
    }

    /// When a loop driven on a virtual clock towards `target` looks next: now while ready work
    /// waits, else at the earliest timer's deadline; nil when nothing is due by `target`.
    ///
    /// Looking at each deadline in turn is what an `EventLoop` that is never late would do: it
    /// wakes at the earliest deadline, so a timer's callbacks run before a later timer.
    /// A `target` earlier than ``currentTime`` means ``currentTime``.
    package func nextLook(notAfter target: UInt64) -> UInt64? {
        guard let next = nextDeadline else { return nil }
        let look = max(next, currentTime)
        return look <= max(target, currentTime) ? look : nil
    }

    /// Moves ``currentTime`` to `time` (if later) without a round: a virtual clock that reached
    /// its target with nothing more due.
    package func advanceIdle(to time: UInt64) {
        precondition(!isInRound, "SchedulingCore.advanceIdle(to:) during a round")
        if time > currentTime { currentTime = time }
    }

    /// Removes every pending timer and hands their work back in key order, for shutdown.
    ///
    /// Ready work stays queued. As with ``cancel(_:)``, release the returned work outside any lock,
    /// with ``LoopWork/releaseUnrun()`` (a promise timer must learn that it will never fire).
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
        while !ready.isEmpty { removed.append(ready.removeFirstWork()) }
        return removed
    }
}
