#if canImport(Glibc)
    import Glibc
#endif

/// Wall-clock time, for SET's EXAT/PXAT (absolute Unix deadlines) only, read through
/// ``KeyValueClock/unixMilliseconds``; TTLs run on the monotonic ``KeyValueClock``.
enum UnixTime {
    static var nowMilliseconds: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
