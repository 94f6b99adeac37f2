#if canImport(Glibc)
    import Glibc
#endif

/// Where the store reads the time: milliseconds on a monotonic clock.
///
/// The daemon uses ``monotonic`` (CLOCK_MONOTONIC, the clock the loop's timers use); tests pass
/// a clock that reads a `TestLoop`'s virtual `now`, so expiry runs on virtual time.
public struct KeyValueClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock reading `now`, a monotonic time since an arbitrary origin.
    public init(now: @escaping @Sendable () -> Duration) {
        read = {
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
    }

    /// The current time in milliseconds.
    @inline(__always)
    public var nowMilliseconds: Int64 { read() }
}
