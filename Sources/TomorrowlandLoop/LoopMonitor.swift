import CTomorrowlandLoopSupport
import Synchronization
import Tomorrowland
internal import TomorrowlandScheduling

/// An ``EventLoop``'s tick statistics and stall detection: what the user turned on, the totals,
/// the running work the loop publishes for its watchdog, and the watchdog.
///
/// The publication of the running work and the watchdog are the scheduling engine's
/// (``StallPublication``, ``StallWatchdog``), shared with the NIO executor.
///
/// - Important: `@unchecked Sendable`, the state split three ways. `settings` is behind its lock;
///   the totals, the published work and `settingsChanged` are atomics; the fields marked
///   loop-confined are touched only by the thread that drives the loop (like the loop's own
///   confined state, handed from one driver to the next by the loop's inbox lock).
final class LoopMonitor: StallWatchdogClient, @unchecked Sendable {
    /// The watchdog thread's name, as `/proc/self/task/*/comm` shows it (at most 15 characters).
    static let watchdogThreadName = "twl-stall-watch"

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

    /// The running work (a sequence lock: one writer, the loop; one reader, the watchdog), and
    /// the stalls reported.
    let publication = StallPublication()

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
        publication.publish(identity, since: start)
    }

    /// Reports the work numbered `number` unless it was reported already. From the watchdog
    /// (`isFinished` false) or the loop (true); `report` runs on the calling thread.
    func reportStall(
        number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64, isFinished: Bool,
        report: @Sendable (EventLoopStall) -> Void
    ) {
        // Once per piece of work, whichever thread gets here first.
        guard publication.claimReport(number: number) else { return }
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
            stallCount: publication.stallCount)
    }

    // MARK: StallWatchdogClient (watchdog thread)

    func watchdogThreshold() -> UInt64? {
        shared.withLock { $0.settings.stallReport == nil ? nil : $0.settings.stallThreshold }
    }

    func reportStillRunning(number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64) {
        guard let report = shared.withLock({ $0.settings.stallReport }) else { return }
        reportStall(
            number: number, identity: identity, duration: duration, threshold: threshold, isFinished: false,
            report: report)
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
                let watchdog = StallWatchdog(client: self, ownerName: "EventLoop") {
                    twl_loop_name_current_thread(LoopMonitor.watchdogThreadName)
                    return twl_loop_current_thread_id()
                }
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
