#if canImport(Glibc)
    import Glibc
#endif

/// Where the store reads the time: milliseconds on a monotonic clock, and the Unix time that
/// SET's EXAT and PXAT deadlines are given in.
///
/// The daemon uses ``monotonic`` (CLOCK_MONOTONIC, the clock the loop's timers use, and the
/// system's wall clock); tests pass a clock that reads a `TestLoop`'s virtual `now`, so expiry
/// runs on virtual time; a simulation also fixes the Unix time at its start
/// (``init(now:unixMillisecondsAtZero:)``), so that absolute deadlines run on it too.
public struct KeyValueClock: Sendable {
    private let read: @Sendable () -> Int64
    private let readUnix: @Sendable () -> Int64

    /// A clock reading `now`, a monotonic time since an arbitrary origin; Unix time is the
    /// system's wall clock.
    public init(now: @escaping @Sendable () -> Duration) {
        read = Self.milliseconds(of: now)
        readUnix = { UnixTime.nowMilliseconds }
    }

    /// A clock reading `now`, whose Unix time is `unixMillisecondsAtZero` when `now` is zero and
    /// moves with it: no wall clock is read.
    public init(now: @escaping @Sendable () -> Duration, unixMillisecondsAtZero: Int64) {
        let read = Self.milliseconds(of: now)
        self.read = read
        readUnix = { unixMillisecondsAtZero &+ read() }
    }

    private static func milliseconds(of now: @escaping @Sendable () -> Duration) -> @Sendable () -> Int64 {
        {
            let (seconds, attoseconds) = now().components
            return seconds * 1000 + attoseconds / 1_000_000_000_000_000
        }
    }

    /// CLOCK_MONOTONIC, read with `clock_gettime` (a vDSO call, no system call).
    public static let monotonic = KeyValueClock(milliseconds: {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    })

    private init(milliseconds: @escaping @Sendable () -> Int64) {
        read = milliseconds
        readUnix = { UnixTime.nowMilliseconds }
    }

    /// The current time in milliseconds.
    @inline(__always)
    public var nowMilliseconds: Int64 { read() }

    /// Unix time in milliseconds, for EXAT and PXAT.
    public var unixMilliseconds: Int64 { readUnix() }
}
