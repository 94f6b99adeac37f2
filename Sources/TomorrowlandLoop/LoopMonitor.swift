import Synchronization
import Tomorrowland

/// An ``EventLoop``'s tick statistics and stall detection: what the user turned on, the totals,
/// the running work the loop publishes for its watchdog, and the watchdog.
///
/// - Important: `@unchecked Sendable`, the state split three ways. `settings` is behind its lock;
///   the totals, the published work and `settingsChanged` are atomics; the fields marked
///   loop-confined are touched only by the thread that drives the loop (like the loop's own
///   confined state, handed from one driver to the next by the loop's inbox lock).
final class LoopMonitor: @unchecked Sendable {
    /// What the user turned on.
    struct Settings {
        /// Whether tick statistics are on (totals, and the observer if any).
        var measuresTicks = false
        /// Called on the loop's thread after each tick.
        var tickObserver: (@Sendable (EventLoopTick) -> Void)?
        /// The stall threshold in nanoseconds, nil when stall detection is off.
        var stallThreshold: UInt64?
        /// Where stalls go.
        var stallReport: (@Sendable (EventLoopStall) -> Void)?

        /// Whether the loop measures anything.
        var isActive: Bool { measuresTicks || stallThreshold != nil }
    }

    /// The watchdog and the settings it reads, under one lock.
    struct Shared {
        var settings = Settings()
        var watchdog: StallWatchdog?
        /// Set when the loop closes: no watchdog starts after it.
        var isClosed = false
    }

    let shared = LockedValue(Shared())
    /// Set when ``shared``'s settings change; the loop adopts them at its next tick.
    let settingsChanged = Atomic<Bool>(false)

    // MARK: Totals (written by the loop, read from any thread)

    let tickCount = Atomic<UInt64>(0)
    let itemCount = Atomic<UInt64>(0)
    let busyNanoseconds = Atomic<UInt64>(0)
    let waitingNanoseconds = Atomic<UInt64>(0)
    let stallCount = Atomic<UInt64>(0)

    // MARK: The running work (a sequence lock: one writer, the loop; one reader, the watchdog)

    /// Odd while the loop rewrites the fields below; each publication adds 2, so the even value
    /// after it numbers the piece of work (once-per-item reporting keys on it).
    let sequence = Atomic<UInt64>(0)
    let workStart = Atomic<UInt64>(0)
    let workKind = Atomic<UInt>(0)
    let workAddress = Atomic<UInt>(0)
    /// The number of the last piece of work reported, by the watchdog or the loop.
    let lastReported = Atomic<UInt64>(0)

    // MARK: Loop-confined

    /// The settings the loop works with (adopted from ``shared`` at a tick).
    @exclusivity(unchecked) var confined = Settings()
    /// Whether a piece of work is published as running (nested callbacks are not republished).
    @exclusivity(unchecked) var isWorkPublished = false
    /// When the previous measured tick ended, 0 before the first.
    @exclusivity(unchecked) var lastTickEnd: UInt64 = 0
    /// Libevent callbacks run since the previous tick, and their time.
    @exclusivity(unchecked) var callbackItems = 0
    @exclusivity(unchecked) var callbackBusy: UInt64 = 0

    /// On the loop's thread: takes the current settings; returns whether anything is on.
    func adoptSettings() -> Bool {
        settingsChanged.store(false, ordering: .relaxed)
        let settings = shared.withLock { $0.settings }
        if settings.isActive && !confined.isActive {
            // Figures start afresh: the time since the last measured tick is no waiting time.
            lastTickEnd = 0
            callbackItems = 0
            callbackBusy = 0
        }
        confined = settings
        return settings.isActive
    }

    // MARK: Publishing the running work (loop's thread)

    /// Publishes `identity` as the work running since `start`; returns its number.
    @discardableResult
    func publish(_ identity: LoopWorkIdentity, since start: UInt64) -> UInt64 {
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
    func readPublished() -> (number: UInt64, start: UInt64, identity: LoopWorkIdentity)? {
        let before = sequence.load(ordering: .acquiring)
        guard before & 1 == 0 else { return nil }
        let start = workStart.load(ordering: .relaxed)
        let kind = workKind.load(ordering: .relaxed)
        let address = workAddress.load(ordering: .relaxed)
        atomicMemoryFence(ordering: .acquiring)
        guard sequence.load(ordering: .relaxed) == before else { return nil }
        return (before, start, LoopWorkIdentity(kind: .init(rawValue: kind) ?? .idle, address: address))
    }

    /// Reports the work numbered `number` unless it was reported already. From the watchdog
    /// (`isFinished` false) or the loop (true); `report` runs on the calling thread.
    func reportStall(
        number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64, isFinished: Bool,
        report: @Sendable (EventLoopStall) -> Void
    ) {
        // Once per piece of work, whichever thread gets here first.
        guard lastReported.exchange(number, ordering: .relaxed) != number else { return }
        stallCount.wrappingAdd(1, ordering: .relaxed)
        report(
            EventLoopStall(
                work: identity.name, duration: .nanoseconds(Int64(clamping: duration)), isFinished: isFinished,
                threshold: .nanoseconds(Int64(clamping: threshold))))
    }

    // MARK: Totals (loop's thread)

    /// Adds a tick that ran `items` pieces of work from `start` to `end` (plus the libevent
    /// callbacks since the previous tick), and calls the observer.
    func recordTick(start: UInt64, end: UInt64, items: Int) {
        let busy = (end &- start) &+ callbackBusy
        let sincePrevious = lastTickEnd == 0 || start < lastTickEnd ? 0 : start - lastTickEnd
        let waiting = sincePrevious > callbackBusy ? sincePrevious - callbackBusy : 0
        let count = items + callbackItems
        callbackItems = 0
        callbackBusy = 0
        lastTickEnd = end
        // One writer: plain load-and-store, no read-modify-write instruction needed.
        tickCount.store(tickCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        itemCount.store(itemCount.load(ordering: .relaxed) &+ UInt64(count), ordering: .relaxed)
        busyNanoseconds.store(busyNanoseconds.load(ordering: .relaxed) &+ busy, ordering: .relaxed)
        waitingNanoseconds.store(waitingNanoseconds.load(ordering: .relaxed) &+ waiting, ordering: .relaxed)
        if let observer = confined.tickObserver {
            observer(
                EventLoopTick(
                    itemCount: count, busyTime: .nanoseconds(Int64(clamping: busy)),
                    waitingTime: .nanoseconds(Int64(clamping: waiting))))
        }
    }

    /// The totals, from any thread.
    var totals: EventLoopTickTotals {
        EventLoopTickTotals(
            tickCount: tickCount.load(ordering: .relaxed),
            itemCount: itemCount.load(ordering: .relaxed),
            busyTime: .nanoseconds(Int64(clamping: busyNanoseconds.load(ordering: .relaxed))),
            waitingTime: .nanoseconds(Int64(clamping: waitingNanoseconds.load(ordering: .relaxed))),
            stallCount: stallCount.load(ordering: .relaxed))
    }

    // MARK: Settings (any thread)

    /// Changes the settings, starting or stopping the watchdog to match; the loop adopts them at
    /// its next tick. Does nothing once the loop closed.
    func update(_ change: (inout Settings) -> Void) {
        let (started, stopped) = shared.withLock { shared -> (StallWatchdog?, StallWatchdog?) in
            guard !shared.isClosed else { return (nil, nil) }
            change(&shared.settings)
            settingsChanged.store(true, ordering: .releasing)
            if shared.settings.stallThreshold != nil, shared.watchdog == nil {
                let watchdog = StallWatchdog(monitor: self)
                shared.watchdog = watchdog
                return (watchdog, nil)
            }
            if shared.settings.stallThreshold == nil, let watchdog = shared.watchdog {
                shared.watchdog = nil
                return (nil, watchdog)
            }
            return (nil, nil)
        }
        // Outside the lock: the watchdog takes it on each wake-up, and stopping joins it.
        started?.start()
        stopped?.stop()
    }

    /// The loop closed (shutdown, or deinit): stops the watchdog and ignores later settings.
    func close() {
        let watchdog = shared.withLock { shared -> StallWatchdog? in
            shared.isClosed = true
            shared.settings = Settings()
            settingsChanged.store(true, ordering: .releasing)
            return shared.watchdog.take()
        }
        watchdog?.stop()
    }
}
