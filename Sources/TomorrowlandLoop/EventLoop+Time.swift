internal import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

extension EventLoop {
    /// The loop's current time: what code running on the loop reads instead of a system clock.
    ///
    /// A `Duration` since a fixed point of the loop's clock, like `TestLoop`'s `now`: only
    /// differences between two readings mean something. A loop made with ``init()`` or
    /// ``init(borrowing:)`` reads `CLOCK_MONOTONIC` (its origin is the system's boot); a loop of a
    /// simulated host reads the simulation's virtual clock, which only moves when the simulation
    /// picks its next event. So timing logic that reads this (an idle timeout that compares the
    /// time of the last activity with now) runs the same on both.
    ///
    /// On the loop's thread, inside a tick, this is the tick's time: the time the loop read once
    /// when the tick began, which is also the time a timer's delay counts from (a timer scheduled
    /// with delay `d` is due at `now + d`). Anywhere else it is a fresh reading of the clock.
    public var now: Duration {
        let nanoseconds =
            inEventLoop ? (core.deadlineInRound(after: 0) ?? currentTime()) : currentTime()
        return .nanoseconds(Int64(clamping: nanoseconds))
    }

    /// The loop's clock in nanoseconds, its backend's: ``MonotonicClock`` on libevent, the
    /// virtual clock of a simulated loop.
    ///
    /// Read once per tick, and once per timer scheduled outside a round: on libevent, one test of
    /// the backend carrier's case and an inlined `clock_gettime`.
    @inline(__always)
    func currentTime() -> UInt64 {
        backend.now
    }
}
