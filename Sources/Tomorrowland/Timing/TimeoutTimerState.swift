/// The one-shot life of a timeout's timer, kept by its ``TimeoutBox`` under the promise's lock:
/// the phases of ``PromiseTimerState`` in 14 bytes instead of 80, so that the box stays within
/// glibc's fast bins (a chunk of at most 128 bytes).
///
/// The common case, a timer that its executor stores itself (``PromiseExecutor/storeTimer(_:after:)``:
/// the event loop, the test loop, the NIO executor), keeps the stored timer's identifier inline.
/// The other executors' handle is any type (40 bytes as an optional existential): those paths
/// keep it in a ``TimeoutTimerHolder`` of their own, allocated only there. An operation queue's
/// reservation never enters the state: the box makes it as it arms the timer
/// (``TimeoutBox/start(after:)``), and arms through it at once.
///
/// Transitions hand back what to cancel or release; the owner does it after unlocking (an
/// executor's handle is any type, and cancelling it takes the executor's locks).
@usableFromInline
struct TimeoutTimerState {
    /// What names the timer's executor-side state, by the way it was armed.
    @usableFromInline
    enum Link {
        /// Nothing: not armed (yet), or ended.
        case none
        /// Stored in the executor's own timers: the ``PromiseTimerID``'s numbers, the 8-byte one
        /// first, so that the case takes 12 bytes and the enum 13.
        case stored(sequence: UInt64, slot: UInt32)
        /// Armed through a handle, which the holder keeps.
        case held(TimeoutTimerHolder)
    }

    /// The stored timer, or the holder of the handle. First: the phase takes the byte after its
    /// 13, instead of 8 bytes of its own before them.
    @usableFromInline
    var link = Link.none
    /// Where the timer is: idle, arming, armed or done (``PromiseTimerState/Phase``).
    @usableFromInline
    var phase = PromiseTimerState.Phase.idle

    /// An idle timer.
    @inlinable
    init() {}

    /// Moves an idle timer to arming; returns whether it did (false: cancelled already).
    @inline(__always)
    mutating func beginArming() -> Bool {
        guard phase == .idle else { return false }
        phase = .arming
        return true
    }

    /// Records the timer that the executor stored itself; false if the timer was cancelled or
    /// fired meanwhile, and the caller must cancel `id` (or merely forget it).
    @inline(__always)
    mutating func finishArming(storedAs id: PromiseTimerID) -> Bool {
        // Arming, the link is `.none` (only a finished arming sets it): matched here, the store
        // below has no old link to destroy.
        guard phase == .arming, case .none = link else { return false }
        link = .stored(sequence: id.sequence, slot: id.slot)
        phase = .armed
        return true
    }

    /// Records the handle that arming returned, in `holder` (made for it); false if the timer was cancelled or fired meanwhile, and the caller must cancel (or merely
    /// drop) the handle.
    @inline(__always)
    mutating func finishArming(with handle: any PromiseScheduledWork, in holder: TimeoutTimerHolder) -> Bool {
        guard phase == .arming else { return false }
        holder.handle = handle
        link = .held(holder)
        phase = .armed
        return true
    }

    /// Ends the timer by a cancel if it is armed in its executor's own timers, the common case
    /// (a deadline cancelled because its request finished): returns the stored timer's
    /// identifier, to cancel outside the lock; nil, and nothing changed, otherwise (then use
    /// ``cancel()``).
    @inline(__always)
    mutating func cancelStored() -> PromiseTimerID? {
        guard phase == .armed, case .stored(let sequence, let slot) = link else { return nil }
        phase = .done
        link = .none
        return PromiseTimerID(slot: slot, sequence: sequence)
    }

    /// Ends the timer by a cancel; returns what to cancel outside the lock: the armed timer's
    /// stored identifier or holder (handle). (Being armed, the timer has nothing to cancel here:
    /// the arming caller cancels what it armed when ``finishArming(storedAs:)`` or
    /// ``finishArming(with:in:)`` fails.)
    @inline(__always)
    mutating func cancel() -> Link {
        guard phase != .done else { return .none }
        phase = .done
        return link.take()
    }

    /// Ends an armed (or arming) timer because it fired or its executor released it; returns
    /// whether it was armed, and the spent link, to be dropped outside the lock (a stored timer
    /// needs nothing: the executor drops its reference after the call).
    @inline(__always)
    mutating func end() -> (wasArmed: Bool, spent: Link) {
        guard phase == .arming || phase == .armed else { return (false, .none) }
        phase = .done
        return (true, link.take())
    }
}

extension TimeoutTimerState.Link {
    /// Moves the link out, leaving ``none``.
    @inline(__always)
    mutating func take() -> Self {
        let taken = self
        self = .none
        return taken
    }

    /// Cancels what a cancel of the timer took out (``TimeoutTimerState/cancel()``): the stored
    /// timer through `cancelStored`, or the holder's handle. Call outside the owner's lock.
    @inline(__always)
    func perform(cancelStored: (PromiseTimerID) -> Void) {
        switch self {
        case .none:
            break
        case .stored(let sequence, let slot):
            cancelStored(PromiseTimerID(slot: slot, sequence: sequence))
        case .held(let holder):
            // Taken out under the lock by the cancel, which ended the timer: nobody else touches
            // the holder any more.
            holder.handle?.cancel()
        }
    }
}

/// The out-of-line part of a ``TimeoutTimerState`` for executors that do not store timers
/// themselves: the handle that arming returned.
///
/// - Important: `@unchecked Sendable`: `handle` is only touched under the owning ``TimeoutBox``'s
///   lock while the box's timer state links to the holder, and by the one thread that took the
///   holder out of that state afterwards.
@usableFromInline
final class TimeoutTimerHolder: @unchecked Sendable {
    /// The executor's handle, once armed.
    @usableFromInline
    @exclusivity(unchecked)
    var handle: (any PromiseScheduledWork)?

    /// A holder without a handle yet.
    @inlinable
    init() {}
}
