import Synchronization
import Tomorrowland

/// A loop's tick statistics and stall detection, for `EventLoop` and the NIO executor: what the
/// user turned on, the running totals, the running work the loop publishes
/// (``StallPublication``), and the watchdog (``StallWatchdog``).
///
/// The loop reads one atomic on its hot path and takes its monitored paths, out of line, only
/// when something is on: `EventLoop` checks ``settingsChanged`` once per tick and adopts the
/// settings then; the NIO executor checks ``isActive`` once per NIO task it runs or queues from
/// another thread, and adopts the settings at the start of each monitored one.
///
/// - Important: `@unchecked Sendable`, the state split three ways. `shared` is behind its lock;
///   the totals, the publication, ``settingsChanged`` and ``isActive`` are atomics; the fields
///   marked loop-confined are touched only by the thread that runs the loop's work (for an
///   `EventLoop`, its driver, handed from one to the next by the loop's inbox lock).
///   LoopInvariants: "Loop confinement"; NIOInvariants: "The loop's thread only".
package final class LoopMonitor: StallWatchdogClient, @unchecked Sendable {
    /// What the user turned on.
    package struct Settings {
        /// Whether tick statistics are on (totals, and the observer if any).
        package var measuresTicks = false
        /// Called on the loop's thread after each measured tick.
        package var tickObserver: (@Sendable (LoopTick) -> Void)?
        /// The stall threshold in nanoseconds, nil when stall detection is off.
        package var stallThreshold: UInt64?
        /// Where stalls go.
        package var stallReport: (@Sendable (LoopStall) -> Void)?

        /// Nothing on.
        package init() {}

        /// Whether the loop measures anything.
        package var isActive: Bool { measuresTicks || stallThreshold != nil }
    }

    /// The settings and the watchdog that reads them, under one lock.
    private struct Shared {
        var settings = Settings()
        var watchdog: StallWatchdog?
        /// Set when the loop closes: no watchdog starts after it, settings stay off.
        var isClosed = false
    }

    /// The kind of loop, as its stall reports name it (``LoopStall/loopKind``).
    private let loopKind: String
    /// Names the loop type in the watchdog's one message (its thread could not start).
    private let ownerName: String
    /// Runs first on the watchdog's thread (to name it); returns its id, if the loop has one.
    private let watchdogThreadStart: @Sendable () -> Int32?
    private let shared = LockedValue(Shared())
    /// Set when the settings change; the loop adopts them (``adoptSettings()``) when it next looks.
    package let settingsChanged = Atomic<Bool>(false)
    /// Whether the settings turn anything on: the NIO executor's one check.
    package let isActive = Atomic<Bool>(false)
    /// The running work (a sequence lock: one writer, the loop; one reader, the watchdog), and
    /// the stalls reported.
    package let publication = StallPublication()

    // MARK: Totals (written by the loop, read from any thread)

    private let tickCount = Atomic<UInt64>(0)
    private let itemCount = Atomic<UInt64>(0)
    private let busyNanoseconds = Atomic<UInt64>(0)
    private let waitingNanoseconds = Atomic<UInt64>(0)

    // MARK: Loop-confined

    /// The settings the loop works with, adopted from the shared ones by ``adoptSettings()``.
    @exclusivity(unchecked) package private(set) var confined = Settings()
    /// Whether a piece of work is published as running (nested callbacks are not republished).
    @exclusivity(unchecked) private var isWorkPublished = false
    /// When the previous measured tick ended, 0 before the first.
    @exclusivity(unchecked) private var lastTickEnd: UInt64 = 0
    /// Callbacks measured since the previous tick, and their time (`EventLoop`'s libevent
    /// callbacks).
    @exclusivity(unchecked) private var callbackItems = 0
    @exclusivity(unchecked) private var callbackBusy: UInt64 = 0
    /// The executor's NIO tasks that ran work since the last reported tick, and the pieces of
    /// work they ran (the NIO executor's drains and timer firings).
    @exclusivity(unchecked) private var executorTasks = 0
    @exclusivity(unchecked) private var executorItems = 0

    /// A monitor with everything off. `loopKind` names the loop in its stall reports,
    /// `ownerName` in the watchdog's one message; `watchdogThreadStart` runs first on the
    /// watchdog's thread.
    package init(
        loopKind: String, ownerName: String, watchdogThreadStart: @escaping @Sendable () -> Int32? = { nil }
    ) {
        self.loopKind = loopKind
        self.ownerName = ownerName
        self.watchdogThreadStart = watchdogThreadStart
    }

    // MARK: Settings (any thread)

    /// Changes the settings, starting or stopping the watchdog to match; the loop adopts them
    /// when it next looks. Does nothing once the monitor closed; returns whether it changed them.
    @discardableResult
    package func update(_ change: (inout Settings) -> Void) -> Bool {
        let (applied, started, stopped) = shared.withLock {
            shared -> (Bool, StallWatchdog?, StallWatchdog?) in
            guard !shared.isClosed else { return (false, nil, nil) }
            change(&shared.settings)
            isActive.store(shared.settings.isActive, ordering: .relaxed)
            settingsChanged.store(true, ordering: .releasing)
            if shared.settings.stallThreshold != nil, shared.watchdog == nil {
                let watchdog = StallWatchdog(client: self, ownerName: ownerName, onStart: watchdogThreadStart)
                shared.watchdog = watchdog
                return (true, watchdog, nil)
            }
            if shared.settings.stallThreshold == nil, let watchdog = shared.watchdog {
                shared.watchdog = nil
                return (true, nil, watchdog)
            }
            return (true, nil, nil)
        }
        // Outside the lock: the watchdog takes it on each wake-up, and stopping joins it.
        started?.start()
        stopped?.stop()
        return applied
    }

    /// Turns stall detection on at `threshold` (positive), reporting to `report`, or changes
    /// both; returns false once the monitor closed.
    @discardableResult
    package func enableStallDetection(threshold: Duration, report: @escaping @Sendable (LoopStall) -> Void) -> Bool {
        let (seconds, attoseconds) = threshold.components
        let nanoseconds = UInt64(clamping: seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
        return update { settings in
            settings.stallThreshold = max(nanoseconds, 1)
            settings.stallReport = report
        }
    }

    /// Turns stall detection off, stopping the watchdog.
    package func disableStallDetection() {
        update { settings in
            settings.stallThreshold = nil
            settings.stallReport = nil
        }
    }

    /// The loop closed (shutdown, or deinit): stops the watchdog and ignores later settings.
    package func close() {
        let watchdog = shared.withLock { shared -> StallWatchdog? in
            shared.isClosed = true
            shared.settings = Settings()
            isActive.store(false, ordering: .relaxed)
            settingsChanged.store(true, ordering: .releasing)
            return shared.watchdog.take()
        }
        watchdog?.stop()
    }

    /// The watchdog, nil while stall detection is off; for tests.
    package var watchdogForTests: StallWatchdog? {
        shared.withLock { $0.watchdog }
    }

    /// ``isActive``'s value; for tests.
    package var isActiveForTests: Bool {
        isActive.load(ordering: .relaxed)
    }

    /// Whether ``close()`` ran; for tests.
    package var isClosedForTests: Bool {
        shared.withLock { $0.isClosed }
    }

    // MARK: Adopting the settings (loop's thread)

    /// Takes the current settings; returns whether anything is on.
    package func adoptSettings() -> Bool {
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

    /// ``adoptSettings()`` when the settings changed since the last adoption.
    package func adoptSettingsIfChanged() {
        if settingsChanged.load(ordering: .relaxed) { _ = adoptSettings() }
    }

    // MARK: Running work (loop's thread)

    /// Runs `work` with `perform`, published to the watchdog as running since `start` (on
    /// ``StallPublication/now()``'s clock), and reports it if it held the loop `threshold`
    /// nanoseconds or longer; returns when it ended. Leaves it published: the caller publishes
    /// the next work, or ``publishIdle()``.
    package func runPublished(
        _ work: consuming LoopWork, since start: UInt64, threshold: UInt64, perform: (consuming LoopWork) -> Void
    ) -> UInt64 {
        let identity = LoopWorkIdentity(work)
        let number = publication.publish(identity, since: start)
        isWorkPublished = true
        perform(work)
        isWorkPublished = false
        let end = StallPublication.now()
        if end &- start >= threshold {
            reportStall(
                number: number, identity: identity, duration: end &- start, threshold: threshold, isFinished: true)
        }
        return end
    }

    /// Runs `work` with `perform`, published and timed when stall detection is on (`threshold`:
    /// ``Settings/stallThreshold`` of ``confined``, nil when off), and publishes the loop idle
    /// after it.
    package func run(_ work: consuming LoopWork, threshold: UInt64?, perform: (consuming LoopWork) -> Void) {
        guard let threshold else {
            perform(work)
            return
        }
        _ = runPublished(work, since: StallPublication.now(), threshold: threshold, perform: perform)
        publishIdle()
    }

    /// Publishes that no work runs.
    package func publishIdle() {
        publication.publish(.idle, since: 0)
    }

    /// Runs a callback's `body` measured: its time and count go into the next measured tick's
    /// figures, and it is published to the watchdog as `identity` while it runs. A callback that
    /// runs inside a piece of work already published (nested) is part of that work.
    package func runMeasuredCallback(as identity: LoopWorkIdentity, _ body: () -> Void) {
        // The loop's own events (an `eventfd` read, a flag reset) are neither work nor waiting.
        guard !isWorkPublished, identity.kind != .loopEvent else {
            body()
            return
        }
        let start = StallPublication.now()
        let threshold = confined.stallThreshold
        var number: UInt64 = 0
        if threshold != nil {
            number = publication.publish(identity, since: start)
            isWorkPublished = true
        }
        body()
        let end = StallPublication.now()
        if let threshold {
            isWorkPublished = false
            publishIdle()
            if end &- start >= threshold {
                reportStall(
                    number: number, identity: identity, duration: end &- start, threshold: threshold,
                    isFinished: true)
            }
        }
        callbackItems += 1
        callbackBusy &+= end &- start
    }

    /// Reports the work numbered `number` unless it was reported already or stall detection is
    /// off. From the watchdog (`isFinished` false) or the loop (true); the report runs on the
    /// calling thread.
    private func reportStall(
        number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64, isFinished: Bool
    ) {
        // Once per piece of work, whichever thread gets here first.
        guard let report = shared.withLock({ $0.settings.stallReport }), publication.claimReport(number: number)
        else { return }
        report(
            LoopStall(
                work: identity.name, duration: .nanoseconds(Int64(clamping: duration)), isFinished: isFinished,
                threshold: .nanoseconds(Int64(clamping: threshold)), loopKind: loopKind))
    }

    // MARK: Ticks (loop's thread)

    /// `EventLoop`: adds a tick of `loopID` that ran `items` pieces of work from `start` to `end`
    /// (plus the callbacks measured since the previous tick), and calls the observer.
    package func recordMeasuredTick(loopID: ObjectIdentifier, start: UInt64, end: UInt64, items: Int) {
        let busy = (end &- start) &+ callbackBusy
        let sincePrevious = lastTickEnd == 0 || start < lastTickEnd ? 0 : start - lastTickEnd
        let waiting = sincePrevious > callbackBusy ? sincePrevious - callbackBusy : 0
        let count = items + callbackItems
        callbackItems = 0
        callbackBusy = 0
        lastTickEnd = end
        let tick = addTick(loopID: loopID, items: count, busy: busy, waiting: waiting)
        confined.tickObserver?(tick)
    }

    /// The NIO executor: starts counting its work per tick, for the ticks NIO reports. Between
    /// two ticks.
    package func startCountingReportedTicks() {
        executorTasks = 0
        executorItems = 0
        update { $0.measuresTicks = true }
    }

    /// The NIO executor: counts one of its NIO tasks that ran `items` pieces of work, for the
    /// tick's figures.
    package func countExecutorTask(items: Int) {
        guard confined.measuresTicks else { return }
        executorTasks &+= 1
        executorItems &+= items
    }

    /// The NIO executor: adds the tick NIO reports (`tasks` NIO tasks, `busy` and `waiting`
    /// nanoseconds) to the totals; returns its figures, the executor's work counted piece by
    /// piece.
    package func recordReportedTick(
        loopID: ObjectIdentifier, tasks: Int, busy: UInt64, waiting: UInt64
    )
        -> LoopTick
    {
        // The executor's tasks are among NIO's; each counts as the work it ran instead.
        let others = tasks > executorTasks ? tasks - executorTasks : 0
        let (sum, overflow) = others.addingReportingOverflow(executorItems)
        executorTasks = 0
        executorItems = 0
        return addTick(loopID: loopID, items: overflow ? Int.max : sum, busy: busy, waiting: waiting)
    }

    /// Adds a tick to the totals; returns its figures.
    private func addTick(loopID: ObjectIdentifier, items: Int, busy: UInt64, waiting: UInt64) -> LoopTick {
        // One writer: plain load-and-store, no read-modify-write instruction needed.
        tickCount.store(tickCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        itemCount.store(itemCount.load(ordering: .relaxed) &+ UInt64(items), ordering: .relaxed)
        busyNanoseconds.store(busyNanoseconds.load(ordering: .relaxed) &+ busy, ordering: .relaxed)
        waitingNanoseconds.store(waitingNanoseconds.load(ordering: .relaxed) &+ waiting, ordering: .relaxed)
        return LoopTick(
            loopID: loopID, itemCount: items, busyTime: .nanoseconds(Int64(clamping: busy)),
            waitingTime: .nanoseconds(Int64(clamping: waiting)))
    }

    /// The totals, from any thread.
    package var totals: LoopTickTotals {
        LoopTickTotals(
            tickCount: tickCount.load(ordering: .relaxed),
            itemCount: itemCount.load(ordering: .relaxed),
            busyTime: .nanoseconds(Int64(clamping: busyNanoseconds.load(ordering: .relaxed))),
            waitingTime: .nanoseconds(Int64(clamping: waitingNanoseconds.load(ordering: .relaxed))),
            stallCount: publication.stallCount)
    }

    // MARK: StallWatchdogClient (watchdog thread)

    package func watchdogThreshold() -> UInt64? {
        shared.withLock { $0.settings.stallReport == nil ? nil : $0.settings.stallThreshold }
    }

    package func reportStillRunning(number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64) {
        reportStall(number: number, identity: identity, duration: duration, threshold: threshold, isFinished: false)
    }
}
