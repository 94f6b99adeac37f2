#if canImport(Glibc)
import Glibc
#endif

/// The loop's clock: `CLOCK_MONOTONIC`, in nanoseconds.
///
/// libevent only ever receives relative delays computed from this clock, so the two never need to
/// agree on an epoch (and libevent's cached time never decides when our timers are due).
enum MonotonicClock {
    /// The current time in nanoseconds since an arbitrary, fixed point.
    @inline(__always)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
