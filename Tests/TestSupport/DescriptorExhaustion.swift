#if canImport(Glibc)
    import Glibc
#endif

/// Every descriptor of this process in use, under a lowered limit: a new socket, an `accept` or
/// a `dup` fails with `EMFILE` until ``release()``.
///
/// The limit is the process's: use it only in a child process (an exit test), never beside other
/// tests.
package struct DescriptorExhaustion: ~Copyable {
    private let fillers: [Int32]
    /// Whether the process ran out (the last `dup` failed with `EMFILE`), as intended.
    package let isExhausted: Bool

    /// Lowers the soft limit to `limit` and takes every descriptor below it.
    package init(limit: rlim_t = 256) {
        var current = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &current)
        current.rlim_cur = limit
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &current)
        var taken: [Int32] = []
        while true {
            let fd = dup(0)
            if fd < 0 { break }
            taken.append(fd)
        }
        isExhausted = errno == EMFILE
        fillers = taken
    }

    /// Closes the descriptors taken (the lowered limit stays).
    package consuming func release() {
        for fd in fillers { close(fd) }
    }
}
