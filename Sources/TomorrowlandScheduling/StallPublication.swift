import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a loop's thread publishes about the work it is running, for its stall watchdog
/// (``StallWatchdog``): a sequence lock with one writer, the loop, and one reader, the watchdog.
/// Shared by `EventLoop` and the NIO executor.
///
/// Each publication numbers the piece of work; ``claimReport(number:)`` lets whichever thread
/// sees it past the threshold first (the watchdog while it runs, the loop after it ended) report
/// it, once.
///
/// `Sendable`: every field is an atomic.
package final class StallPublication: Sendable {
    /// Odd while the loop rewrites the fields below; each publication adds 2, so the even value
    /// after it numbers the piece of work (once-per-item reporting keys on it).
    private let sequence = Atomic<UInt64>(0)
    private let workStart = Atomic<UInt64>(0)
    private let workKind = Atomic<UInt>(0)
    private let workAddress = Atomic<UInt>(0)
    /// The number of the last piece of work reported, by the watchdog or the loop.
    private let lastReported = Atomic<UInt64>(0)
    /// Stalls reported.
    private let stalls = Atomic<UInt64>(0)

    package init() {}

    /// `CLOCK_MONOTONIC` in nanoseconds: the clock of ``publish(_:since:)``'s `start`, which the
    /// watchdog reads too (`EventLoop`'s own clock is the same one).
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// On the loop's thread: publishes `identity` as the work running since `start` (on
    /// ``now()``'s clock; ``LoopWorkIdentity/idle`` with 0 when nothing runs); returns its number.
    @discardableResult
    package func publish(_ identity: LoopWorkIdentity, since start: UInt64) -> UInt64 {
        // A sequence lock's writer: odd, then (after a release fence, so that no field store is
        // seen before it) the fields, then even with release.
        let next = sequence.load(ordering: .relaxed) &+ 1
        sequence.store(next, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        workStart.store(start, ordering: .relaxed)
        workKind.store(identity.kind.rawValue, ordering: .relaxed)
        workAddress.store(identity.address, ordering: .relaxed)
        sequence.store(next &+ 1, ordering: .releasing)
        return next &+ 1
    }

    /// The work published last, with its number and start, as the watchdog reads it; nil while
    /// the loop rewrites it (read again later).
    package func readPublished() -> (number: UInt64, start: UInt64, identity: LoopWorkIdentity)? {
        let before = sequence.load(ordering: .acquiring)
        guard before & 1 == 0 else { return nil }
        let start = workStart.load(ordering: .relaxed)
        let kind = workKind.load(ordering: .relaxed)
        let address = workAddress.load(ordering: .relaxed)
        atomicMemoryFence(ordering: .acquiring)
        guard sequence.load(ordering: .relaxed) == before else { return nil }
        return (before, start, LoopWorkIdentity(kind: .init(rawValue: kind) ?? .idle, address: address))
    }

    /// Whether the caller is the one to report the work numbered `number`: true once per piece of
    /// work, whichever thread asks first, and then counted in ``stallCount``.
    package func claimReport(number: UInt64) -> Bool {
        guard lastReported.exchange(number, ordering: .relaxed) != number else { return false }
        stalls.wrappingAdd(1, ordering: .relaxed)
        return true
    }

    /// The stalls claimed so far. Safe from any thread.
    package var stallCount: UInt64 {
        stalls.load(ordering: .relaxed)
    }
}
