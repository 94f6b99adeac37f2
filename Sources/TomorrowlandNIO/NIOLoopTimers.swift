#if NIO
    import NIOCore
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// The timers of a ``NIOEventLoopExecutor``: a heap of its own, ordered by (deadline, scheduling
    /// order), and one NIO scheduled callback armed for the earliest deadline.
    ///
    /// Why: a NIO scheduled callback per timer costs NIO's lock, an entry in NIO's timer heap, its
    /// handle and our objects around it; a request deadline that is armed and then cancelled (the
    /// commonest timer of a server) paid all of that twice. Here a timer is a slot of Tomorrowland's
    /// `SchedulingCore` (the heap our own `EventLoop` and `TestLoop` use), inserted and removed
    /// without a NIO call. NIO only sees one callback per earliest deadline: it is armed again only
    /// when a timer with an earlier deadline arrives, or, after it fired, for the next timer.
    ///
    /// A callback armed for a timer that was then cancelled still fires at its deadline, finds
    /// nothing due, and arms the next one if needed; callbacks that an earlier deadline superseded
    /// are not cancelled either (NIO's cancel takes its lock and searches its heap), they fire and
    /// run whatever is due then. ``earliestArmedDeadline`` tracks the earliest callback still
    /// pending, so a timer arms one only if it precedes every pending one.
    ///
    /// Order: when a callback fires, the timers due at the loop's `now` run in (deadline,
    /// scheduling order), all inside that one NIO task, at the place NIO gives the callback among
    /// its tasks (NIO's tick takes the scheduled callbacks that are due after, or interleaved with,
    /// the immediate tasks queued before the tick). What their work submits to the executor runs
    /// after them (the local FIFO's drain is a NIO task of its own).
    ///
    /// Shutdown: NIO cancels the callbacks still pending when a loop shuts down
    /// (`didCancelScheduledCallback`), and drops, without calling either method, a callback armed on a
    /// loop that was shut down (`NIOLoopTimerArm`'s `deinit` tells). Either way every timer of the heap
    /// is released unrun (late-work policy: a `timeout` or `delay` waiting on one ends cancelled; a
    /// stored promise timer is told with `timerReleased()`).
    /// NIO cancels the callbacks only at shutdown (or, on an `EmbeddedEventLoop`, when the test cancels
    /// the loop's remaining tasks), since this type never cancels one.
    ///
    /// `@unchecked Sendable`: everything is touched on the loop's thread only (the executor hops
    /// there for calls from other threads), one call at a time.
    /// NIOInvariants: "The loop's thread only".
    final class NIOLoopTimers: @unchecked Sendable {
        /// The most timers one firing runs before it yields to the loop's other tasks (a timer
        /// that schedules itself again with a zero delay would otherwise never let them run).
        static let batchSize = 1024

        // Only the timers part of the core is used: nothing is ever enqueued as ready work.
        private let core = SchedulingCore()
        /// The loop, used on its thread only (where it is alive), without a reference count.
        /// NIOInvariants: "The unretained loop".
        private let loop: NIOUnretainedLoop
        /// The executor's stall detection and tick counting: a firing checks it once.
        private let monitor: LoopMonitor
        // Unchecked exclusivity: every access is a plain read or write, or one short call on the
        // array, that runs no user code, on the loop's thread.
        // NIOInvariants: "The loop's thread only".
        /// The deadlines of the NIO callbacks armed and not yet fired or cancelled, usually one.
        @exclusivity(unchecked) private var armedDeadlines: [UInt64] = []
        /// The earliest of ``armedDeadlines``, `UInt64.max` when none.
        @exclusivity(unchecked) private(set) var earliestArmedDeadline = UInt64.max
        /// Whether a firing is running its timers (the core's round), kept here rather than read
        /// from the core: a read of the core's property from this module pays a dynamic
        /// exclusivity check on every timer.
        @exclusivity(unchecked) private var isFiring = false

        init(loop: NIOUnretainedLoop, monitor: LoopMonitor) {
            self.loop = loop
            self.monitor = monitor
        }

        /// The number of pending timers (for tests).
        var count: Int { core.timerCount }

        /// The number of NIO callbacks armed and pending (for tests).
        var armedCallbackCount: Int { armedDeadlines.count }

        /// The deadline, on the loop's clock (`EventLoop.now`, in uptime nanoseconds), of a timer
        /// scheduled now with `delay`: from the time of the firing in progress inside one (so equal
        /// delays scheduled by one firing share a deadline), from the loop's `now` otherwise.
        func deadline(after delay: Duration) -> UInt64 {
            let nanoseconds = core.nanoseconds(of: delay)
            if isFiring { return core.deadline(after: nanoseconds) }
            let (sum, overflow) = loop.now.addingReportingOverflow(nanoseconds)
            return overflow ? .max : sum
        }

        /// Adds a timer whose work is `work` and arms a NIO callback if it is due before every
        /// armed one. On the loop.
        func insert(at deadline: UInt64, _ work: @escaping @Sendable () -> Void) -> PromiseTimerID {
            insert(at: deadline, work: .closure(work))
        }

        /// Adds a timer that runs `work` (a closure, or a promise timer stored as it is) and arms a
        /// NIO callback if it is due before every armed one. On the loop.
        func insert(at deadline: UInt64, work: consuming LoopWork) -> PromiseTimerID {
            let id = core.schedule(at: deadline, work)
            if deadline < earliestArmedDeadline { arm(at: deadline) }
            return id
        }

        /// Removes a pending timer and releases its work, here (the caller holds no lock). A timer
        /// that already ran or was removed is left alone. On the loop.
        func remove(_ id: PromiseTimerID) {
            _ = core.cancel(id)
        }

        /// Arms one NIO callback for `deadline`.
        private func arm(at deadline: UInt64) {
            armedDeadlines.append(deadline)
            earliestArmedDeadline = min(earliestArmedDeadline, deadline)
            let arm = NIOLoopTimerArm(timers: self, deadline: deadline)
            do {
                try loop.scheduleCallback(at: deadline, handler: NIOLoopTimerCallback(arm: arm))
            } catch {
                // The loop was shut down (NIO throws `EventLoopError.shutdown`): nothing will fire.
                arm.settle()
                callbackWasCancelled()
            }
            // If NIO dropped the callback (a loop that was shut down drops it and prints an error),
            // `arm` is released here, last, and its `deinit` releases the timers.
        }

        /// One of the armed callbacks fired: runs the timers that are due, then arms a callback for
        /// the next timer unless one is armed for it already.
        fileprivate func fire(armedAt deadline: UInt64) {
            forget(armedDeadline: deadline)
            core.beginRound(at: loop.now)
            isFiring = true
            var ran = 0
            if monitor.isActive.load(ordering: .relaxed) {
                ran = runDueMonitored()
            } else {
                while ran < Self.batchSize, let work = core.nextInRound() {
                    ran += 1
                    switch work {
                    case .closure(let body): body()
                    case .promiseTimer(let timer): timer.timerFired()
                    // Only closures and promise timers are ever inserted.
                    case .promiseJob, .job:
                        preconditionFailure("NIOLoopTimers holds closures and promise timers only")
                    }
                }
            }
            if ran == Self.batchSize {
                // Cut short: the rest is due now, and goes on in a NIO task of its own.
                core.endRound()
            }
            isFiring = false
            if let next = core.nextTimerDeadline, next < earliestArmedDeadline { arm(at: next) }
        }

        /// The timers of ``fire(armedAt:)`` run through the monitor (stall detection is on, or the
        /// loop's ticks are counted); returns how many ran. Out of line: the firing with the
        /// monitor off compiles as before.
        @inline(never)
        private func runDueMonitored() -> Int {
            var ran = 0
            let monitor = self.monitor
            monitor.adoptSettingsIfChanged()
            let threshold = monitor.confined.stallThreshold
            while ran < Self.batchSize, let work = core.nextInRound() {
                ran += 1
                monitor.run(work, threshold: threshold) { $0.runWithoutJobs() }
            }
            monitor.countExecutorTask(items: ran)
            return ran
        }

        /// NIO cancelled or dropped an armed callback: the loop shut down (or, on an
        /// `EmbeddedEventLoop`, the test cancelled its remaining tasks). Releases every timer unrun.
        fileprivate func callbackWasCancelled() {
            armedDeadlines.removeAll()
            earliestArmedDeadline = .max
            releaseAll()
        }

        /// Releases every pending timer's work without running it, outside any state change (the
        /// releases may run deinitializers that schedule or cancel timers).
        private func releaseAll() {
            // A stored promise timer is told (`timerReleased()`: its promise ends cancelled); a
            // closure is just released.
            for work in core.removeAllTimers() { work.releaseUnrun() }
        }

        private func forget(armedDeadline deadline: UInt64) {
            if let index = armedDeadlines.firstIndex(of: deadline) {
                armedDeadlines.remove(at: index)
            }
            earliestArmedDeadline = armedDeadlines.min() ?? .max
        }
    }

    /// What NIO holds for one armed callback of ``NIOLoopTimers``: forwards the firing, and tells a
    /// cancelled or dropped callback (the loop shut down) to the timers.
    struct NIOLoopTimerCallback: NIOScheduledCallbackHandler, Sendable {
        fileprivate let arm: NIOLoopTimerArm

        func handleScheduledCallback(eventLoop: some EventLoop) {
            arm.settle()
            arm.timers.fire(armedAt: arm.deadline)
        }

        func didCancelScheduledCallback(eventLoop: some EventLoop) {
            arm.settle()
            arm.timers.callbackWasCancelled()
        }
    }

    /// One armed callback, owned by NIO alone (through ``NIOLoopTimerCallback``): its `deinit` tells
    /// a callback that NIO released without firing or cancelling it, which a NIO loop that was shut
    /// down does with what it is given.
    ///
    /// `@unchecked Sendable`: `settled` is written and read on the loop's thread; NIO releases the
    /// callback there too (after running or cancelling it, or at once when it drops it, inside
    /// `scheduleCallback`, which only the loop's thread calls).
    /// NIOInvariants: "Released last".
    final class NIOLoopTimerArm: @unchecked Sendable {
        fileprivate let timers: NIOLoopTimers
        fileprivate let deadline: UInt64
        private var settled = false

        fileprivate init(timers: NIOLoopTimers, deadline: UInt64) {
            self.timers = timers
            self.deadline = deadline
        }

        fileprivate func settle() {
            settled = true
        }

        deinit {
            if !settled { timers.callbackWasCancelled() }
        }
    }
#endif
