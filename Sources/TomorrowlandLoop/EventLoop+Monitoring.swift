import CTomorrowlandLoopSupport
import Tomorrowland
internal import TomorrowlandScheduling

extension EventLoop {
    /// Turns on per-tick figures: the running totals of ``tickTotals`` and, if given, `observer`,
    /// called after every tick with what the tick did.
    ///
    /// Off by default. While off, the loop pays one predictable branch per tick. While on, it reads
    /// the monotonic clock twice per tick and once per libevent callback (a watcher handler, a TCP
    /// event), and updates the totals with a few relaxed atomic stores per tick. Takes effect at the
    /// loop's next tick. Calling it again replaces the observer.
    ///
    /// A loop of a simulated host (virtual time, no thread) measures nothing: this does nothing
    /// there.
    ///
    /// - Parameter observer: Called on the loop's thread after each tick, between two ticks: keep
    ///   it short (it delays the next tick), and do not block on the loop from it.
    @preconcurrency
    public func enableTickStatistics(observer: (@Sendable (LoopTick) -> Void)? = nil) {
        guard backend.dynamic.supportsMonitoring else { return }
        monitor.update { settings in
            settings.measuresTicks = true
            settings.tickObserver = observer
        }
    }

    /// Turns per-tick figures off (the totals keep their values); takes effect at the next tick.
    /// Safe from any thread.
    public func disableTickStatistics() {
        monitor.update { settings in
            settings.measuresTicks = false
            settings.tickObserver = nil
        }
    }

    /// The loop's running totals: ticks, work run, time busy and waiting, stalls reported.
    ///
    /// Counted while tick statistics (``enableTickStatistics(observer:)``) or stall detection
    /// (``enableStallDetection(threshold:report:)``) is on; zero if neither ever was. Safe from
    /// any thread: a few relaxed atomic loads.
    public var tickTotals: LoopTickTotals {
        monitor.totals
    }

    /// Turns on stall detection: a piece of loop work that holds the loop for `threshold` or
    /// longer is reported to `report`, once, with its name and how long it held the loop.
    ///
    /// A watchdog thread, started here and stopped by ``disableStallDetection()`` or at
    /// ``shutdown()``, reports work that is still running past the threshold, while it runs: a
    /// callback that blocks the loop for 200 ms is reported roughly 50 to 100 ms into its run
    /// with the default threshold. Work that ends past the threshold before the watchdog looked is
    /// reported by the loop right after it ends. Work that ends within the threshold is never
    /// reported.
    ///
    /// What counts as a piece of work: a closure given to ``execute(_:)`` or
    /// ``schedule(after:_:)``, a promise callback or timer on the loop, a Swift Concurrency job, a
    /// watcher handler, a libevent callback (TCP), the `DispatchQueue.main` blocks a loop on the
    /// main thread drains. A closure or watcher handler is named by its symbol, demangled from the
    /// binary's symbol table (`closure #1 in Server.handle(_:)`), when the binary is not stripped,
    /// by its binary and offset otherwise; a promise callback by its kind and types; the others by
    /// their kind. Names are looked up only when a stall is reported.
    ///
    /// Off by default. While off, the loop pays one predictable branch per tick and per libevent
    /// callback, and no thread runs. While on, each piece of work costs one reading of the
    /// monotonic clock and a few relaxed atomic stores (the loop publishes what runs and since
    /// when; the watchdog reads it), and the watchdog wakes about once per threshold. Tick figures
    /// (``tickTotals``) are counted too. Takes effect at the loop's next tick; calling it again
    /// replaces the threshold and the handler.
    ///
    /// A loop of a simulated host (virtual time, no thread) has no watchdog and reports nothing:
    /// this does nothing there.
    ///
    /// - Parameters:
    ///   - threshold: How long a piece of work may hold the loop before it is reported; 50 ms by
    ///     default. Must be positive.
    ///   - report: Called with each stall: on the watchdog thread while the work still runs, or on
    ///     the loop's thread right after it ended (`LoopStall.isFinished`). Writes one line
    ///     to standard error by default. It must not wait for the loop (it would wait for the work
    ///     that stalls it, or stall it further).
    @preconcurrency
    public func enableStallDetection(
        threshold: Duration = .milliseconds(50),
        report: @escaping @Sendable (LoopStall) -> Void = LoopStall.writeToStandardError
    ) {
        precondition(threshold > .zero, "EventLoop.enableStallDetection(threshold:report:) needs a positive threshold")
        guard backend.dynamic.supportsMonitoring else { return }
        monitor.enableStallDetection(threshold: threshold, report: report)
    }

    /// Turns stall detection off and stops its watchdog thread, waiting for it to end (unless
    /// called from the report handler on that thread: it then ends when the handler returns).
    /// Safe from any thread.
    public func disableStallDetection() {
        monitor.disableStallDetection()
    }

    // MARK: The loop's side

    /// The watchdog thread's name, as `/proc/self/task/*/comm` shows it (at most 15 characters).
    static let watchdogThreadName = "twl-stall-watch"

    /// A loop's monitor, everything off; its watchdog thread is named ``watchdogThreadName``.
    static func makeMonitor() -> LoopMonitor {
        LoopMonitor(loopKind: "EventLoop", ownerName: "EventLoop") {
            twl_loop_name_current_thread(watchdogThreadName)
            return twl_loop_current_thread_id()
        }
    }

    /// Adopts changed settings, at the start of a tick (one relaxed load while nothing changed).
    @inline(__always)
    func adoptMonitorSettingsIfChanged() {
        if monitor.settingsChanged.load(ordering: .relaxed) {
            adoptMonitorSettings()
        }
    }

    /// The rare part of ``adoptMonitorSettingsIfChanged()``, out of line.
    @inline(never)
    func adoptMonitorSettings() {
        isMonitoring = monitor.adoptSettings()
    }

    /// ``runTick(honouringStop:)`` with the figures and stall detection on.
    ///
    /// Never inlined: inlined into its one caller, it would change the code of the tick that runs
    /// with diagnostics off.
    @inline(never)
    func runMonitoredTick(honouringStop: Bool) -> Bool {
        let monitor = self.monitor
        // Monitoring is never on for a simulated loop, so the tick's clock is the monitor's
        // (`CLOCK_MONOTONIC`).
        let start = currentTime()
        core.beginRound(at: start)
        takeInbox()
        let threshold = monitor.confined.stallThreshold
        var remaining = Self.roundBudget
        var items = 0
        var itemStart = start
        while let work = core.nextInRound() {
            items += 1
            if let threshold {
                itemStart = monitor.runPublished(work, since: itemStart, threshold: threshold) { perform($0) }
            } else {
                perform(work)
            }
            remaining -= 1
            if remaining == 0 || shutdownRequested || (honouringStop && stopRequested.load(ordering: .relaxed)) {
                core.endRound()
                break
            }
        }
        let end: UInt64
        if threshold != nil {
            monitor.publishIdle()
            end = itemStart
        } else {
            end = currentTime()
        }
        monitor.recordMeasuredTick(loopID: ObjectIdentifier(self), start: start, end: end, items: items)
        return items > 0
    }

    /// Runs a libevent callback's `body` measured (see `LoopMonitor.runMeasuredCallback(as:_:)`).
    @inline(never)
    func runMonitoredCallback(as identity: LoopWorkIdentity, _ body: () -> Void) {
        monitor.runMeasuredCallback(as: identity, body)
    }
}
