#if NIO
    import NIOCore
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// The work a ``NIOEventLoopExecutor`` is given on its loop's own thread: a FIFO that one NIO
    /// task drains, up to ``batchSize`` items at a time.
    ///
    /// Why: a NIO task is expensive when it carries one callback. On a one-thread
    /// `MultiThreadedEventLoopGroup` (Benchmarks, W1@NIO), one `execute` per callback costs, per
    /// hop, a closure box, the task lock, and NIO's tick loop, which pops tasks in batches under
    /// the lock and reads the clock once per batch, so a chain of callbacks (one ready at a time)
    /// pays a whole batch per callback. Queued here, a hop is
    /// a ring-buffer append and pop, and one NIO task runs the whole chain.
    ///
    /// Order: items run in the order they were appended, never inside the call that appends them
    /// (the drain is a NIO task of its own). Relative to other NIO tasks, a drain runs where it
    /// was queued, and items appended while it runs join it, so a callback can run before a NIO
    /// task queued after the drain started (NIO's own future callbacks run even earlier: inside
    /// `succeed`). After ``batchSize`` items the drain queues itself again behind the loop's
    /// other tasks, so a long chain of callbacks cannot starve them. A drain that ran items queues
    /// the next drain when it ends (see `drain()`), so items appended by NIO tasks that its items
    /// queued join that drain, in the same NIO batch as those tasks.
    ///
    /// Late work: if the loop drops the drain unrun (an `EmbeddedEventLoop` after shutdown drops
    /// what it is given), the drain's ticket abandons what is queued when it is released: jobs end
    /// cancelled (`PromiseJob.abandon()`), closures are released unrun. Tickets are reused, so a
    /// drain costs no allocation.
    ///
    /// Thread-bound drains: on a loop of a `MultiThreadedEventLoopGroup` (NIOPosix's
    /// `SelectableEventLoop`, which runs its tasks on one thread for its whole life, in order, and
    /// never drops a task queued on that thread: it runs every queued task before its thread exits)
    /// a drain needs no ticket. From the first drain of a burst to the drain that finds nothing,
    /// the thread records the queue (``NIOLoopThreadBinding``), and the drain's NIO task is a
    /// closure without captures that finds its queue there. Why: NIO copies a task's closure
    /// four times between `execute` and running it, each copy a retain and a release of the
    /// closure's context, eight atomic operations per drain with a ticket, none without a
    /// context. The record also tells an append from another NIO task of the loop that it runs on
    /// the loop's thread (``isBoundToCurrentThread``) without loading the executor's weak loop
    /// reference (two more atomic operations).
    ///
    /// `@unchecked Sendable`: everything but `loop` is touched only on the loop's thread
    /// (appends come from `inEventLoop` callers, drains run on the loop), one call at a time.
    /// NIOInvariants: "The loop's thread only"; `loop`: NIOInvariants: "The unretained loop".
    final class NIOLoopLocalQueue: @unchecked Sendable {
        /// The most items one NIO task runs before the drain yields to the loop's other tasks.
        static let batchSize = 1024

        // The scheduling engine's ring buffer, as the loops' ready FIFO. Unchecked exclusivity:
        // every access is one short call on the buffer, on the loop's thread, that runs no user
        // code (items are moved out before they run or are abandoned).
        // NIOInvariants: "The loop's thread only".
        @exclusivity(unchecked) private var items = RingBuffer<LoopWork>()
        /// Whether a drain is queued on the loop or running.
        private var drainScheduled = false
        /// A ticket whose drain ran, kept for the next drain. It holds no reference to the queue
        /// while it is here (see ``NIOLoopLocalDrainTicket``), so there is no cycle.
        private var spareTicket: NIOLoopLocalDrainTicket?
        /// The loop, to queue a drain on, without a reference to it (the executor holds it weakly):
        /// only used on the loop's thread (an append or a drain in progress), where the loop is
        /// alive.
        private let loop: NIOUnretainedLoop
        /// The executor's stall detection and tick counting: a drain checks it once.
        private let monitor: LoopMonitor

        /// How drains reach the loop, decided at the first drain (on the loop's thread).
        private enum DrainRoute {
            case undecided
            /// A ticket per drain: any loop.
            case ticket
            /// A closure without captures that finds the queue in ``NIOLoopThreadBinding``: a loop
            /// of a `MultiThreadedEventLoopGroup`.
            case threadBound
        }
        private var route = DrainRoute.undecided
        /// While a thread-bound drain chain is active: the queue itself, so that it outlives the
        /// chain (whose NIO tasks hold no reference to it). Taken when the chain ends.
        private var threadBoundOwner: NIOLoopLocalQueue?

        init(eventLoop: any EventLoop, monitor: LoopMonitor) {
            self.loop = NIOUnretainedLoop.make(eventLoop)
            self.monitor = monitor
        }

        deinit {
            abandonAll()
            items.deallocate()
        }

        /// The spare ticket's identity, for tests (`nil` while a drain is queued or running).
        var spareTicketIdentity: ObjectIdentifier? {
            spareTicket.map(ObjectIdentifier.init)
        }

        /// Whether the calling thread is running this queue's drain: a thread-local compare, so
        /// that a hop from inside a drain (the common case: a callback resolving the next
        /// promise) needs no load of the executor's weak loop reference, whose atomic reference
        /// count updates cost more cycles than the rest of the hop. Safe from any thread.
        var isDrainingOnCurrentThread: Bool {
            ExecutionFlags.isRunning(on: self)
        }

        /// Whether this queue's thread-bound drain chain is active on the calling thread, which is
        /// then the loop's thread (a thread-local compare; see "Thread-bound drains" above). Safe
        /// from any thread.
        var isBoundToCurrentThread: Bool {
            NIOLoopThreadBinding.current == Unmanaged.passUnretained(self).toOpaque()
        }

        /// Whether drains of this queue take the thread-bound route, for tests (`nil` until the
        /// first drain decided it).
        var drainsAreThreadBound: Bool? {
            switch route {
            case .undecided: nil
            case .ticket: false
            case .threadBound: true
            }
        }

        /// Queues `item` and, unless a drain is already queued or running, queues one on the loop.
        /// Call on the loop's thread only.
        func append(_ item: consuming LoopWork) {
            items.append(item)
            if !drainScheduled { scheduleDrain() }
        }

        private func scheduleDrain() {
            drainScheduled = true
            if route == .undecided {
                route = loop.isCurrentMultiThreadedEventLoop ? .threadBound : .ticket
            }
            // The binding is free unless another queue's chain is active on this thread, which a
            // loop of a `MultiThreadedEventLoopGroup` (one loop, so one executor, per thread) never
            // sees; that queue would keep it, and this one take a ticket.
            if route == .threadBound, NIOLoopThreadBinding.current == nil {
                // NIOInvariants: "Drain owner references": recorded and self-held together.
                NIOLoopThreadBinding.current = Unmanaged.passUnretained(self).toOpaque()
                threadBoundOwner = self
                loop.execute { NIOLoopLocalQueue.runThreadBoundDrain() }
                return
            }
            // A ticket whose drain ran comes back to `spareTicket` (or, when its drain queues the
            // next one, is used again at once): no allocation per drain once the first one ran.
            let ticket = spareTicket.take() ?? NIOLoopLocalDrainTicket()
            ticket.arm(self)
            enqueue(ticket)
        }

        /// Queues a drain on the loop with `ticket`, armed for this queue. On the loop.
        fileprivate func enqueue(_ ticket: NIOLoopLocalDrainTicket) {
            // The ticket is the closure's only capture, so it is the closure's context (no box).
            loop.execute { ticket.run() }
        }

        /// Keeps `ticket`, whose drain ran and queued none, for the next drain. On the loop.
        fileprivate func recycle(_ ticket: NIOLoopLocalDrainTicket) {
            if spareTicket == nil { spareTicket = ticket }
        }

        /// Runs up to ``batchSize`` items; its ticket then queues the next drain if it ran any (so
        /// also when items remain after a whole batch). On the loop.
        ///
        /// A drain that ran items and leaves the queue empty queues one more drain anyway: the
        /// items it ran have likely queued NIO tasks (a promise to be fulfilled by another task,
        /// as in W4) whose callbacks land here next, and a drain queued now joins those tasks in
        /// NIO's next batch, where a drain queued by them would need a batch of its own (NIO's
        /// tick loop pays a lock, a clock read and a batch reset per batch). A drain that finds
        /// nothing to run queues none, so an idle loop costs one empty drain, not a spin.
        /// - Returns: Whether to queue another drain (`drainScheduled` stays `true`).
        fileprivate func drain() -> Bool {
            var ran = 0
            if monitor.isActive.load(ordering: .relaxed) {
                ran = drainMonitored()
            } else {
                ExecutionFlags.running(on: self) {
                    while ran < Self.batchSize, !items.isEmpty {
                        ran += 1
                        switch items.removeFirst() {
                        case .closure(let closure): closure()
                        case .promiseJob(let job): job.run()
                        case .job: preconditionFailure("NIOLoopLocalQueue holds no Swift Concurrency jobs")
                        case .promiseTimer: preconditionFailure("NIOLoopLocalQueue holds no promise timers")
                        }
                    }
                }
            }
            if ran == 0 {
                drainScheduled = false
                return false
            }
            return true
        }

        /// The batch of ``drain()`` run through the monitor (stall detection is on, or the loop's
        /// ticks are counted); returns how many items ran. Out of line: the drain with the monitor
        /// off compiles as before.
        @inline(never)
        private func drainMonitored() -> Int {
            var ran = 0
            let monitor = self.monitor
            monitor.adoptSettingsIfChanged()
            let threshold = monitor.confined.stallThreshold
            ExecutionFlags.running(on: self) {
                while ran < Self.batchSize, !items.isEmpty {
                    ran += 1
                    monitor.run(items.removeFirst(), threshold: threshold) { $0.runWithoutJobs() }
                }
            }
            monitor.countExecutorTask(items: ran)
            return ran
        }

        /// The NIO task of a thread-bound drain: drains the queue the thread records, and queues the
        /// next drain, or ends the chain. On the loop.
        private static func runThreadBoundDrain() {
            guard let recorded = NIOLoopThreadBinding.current else {
                preconditionFailure("A thread-bound drain ran on a thread that records no queue")
            }
            // The recorded queue is alive: its `threadBoundOwner` holds it until the chain ends.
            // That reference is returned when the chain ends and released here, after the queue's
            // method has returned (the release may deinitialize the queue).
            // NIOInvariants: "Drain owner references".
            let owner = Unmanaged<NIOLoopLocalQueue>.fromOpaque(recorded)._withUnsafeGuaranteedRef {
                $0.runThreadBoundDrainStep()
            }
            _ = owner
        }

        /// One thread-bound drain; returns the queue's reference to itself when the chain ends.
        private func runThreadBoundDrainStep() -> NIOLoopLocalQueue? {
            if drain() {
                // Captures nothing: NIO's copies of it touch no reference count.
                loop.execute { NIOLoopLocalQueue.runThreadBoundDrain() }
                return nil
            }
            NIOLoopThreadBinding.current = nil
            return threadBoundOwner.take()
        }

        /// Settles everything queued without running it: the loop dropped the drain.
        fileprivate func abandonAll() {
            drainScheduled = false
            while !items.isEmpty {
                if case .promiseJob(let job) = items.removeFirst() { job.abandon() }
            }
        }
    }

    /// One queued drain of a ``NIOLoopLocalQueue``: runs it, or, if the loop releases it without
    /// running it, abandons what the queue holds.
    ///
    /// A ticket is reused: a drain that queues the next drain queues it with the same ticket, and
    /// one that does not drops its queue reference and goes to the queue's spare slot, for the next
    /// drain. NIO may still hold the closure of the drain that ran (it releases a batch's closures
    /// after the batch), so an armed ticket can have two owners; if the loop drops the new drain,
    /// the last release still finds `ran == false` and abandons the queue's work (late, if the old
    /// closure is released last: on a loop that drops work, that is its next release of a task).
    ///
    /// `@unchecked Sendable`: `ran` and `queue` are written on the loop's thread (`run()`,
    /// `arm(_:)`) and read by `deinit` after the last release, which orders the two.
    /// NIOInvariants: "Released last".
    fileprivate final class NIOLoopLocalDrainTicket: @unchecked Sendable {
        // Strong while a drain is queued (the queue must outlive its drain), `nil` in the spare slot
        // (so that the queue and its spare ticket do not keep each other alive).
        private var queue: NIOLoopLocalQueue?
        private var ran = false

        /// Prepares the ticket, from the spare slot, for a drain of `queue` about to be queued. On
        /// the loop.
        func arm(_ queue: NIOLoopLocalQueue) {
            self.queue = queue
            ran = false
        }

        func run() {
            guard let unretained = queue.map(Unmanaged.passUnretained) else { return }
            ran = true
            // `queue` holds the queue while the drain runs: no retain and release of it per drain.
            // NIOInvariants: "Drain owner references": only `arm` (spare tickets) and `run` write it.
            if unretained._withUnsafeGuaranteedRef({ $0.drain() }) {
                // The next drain, with this ticket, still armed for the same queue.
                ran = false
                unretained._withUnsafeGuaranteedRef { $0.enqueue(self) }
            } else {
                let queue = unretained.takeUnretainedValue()
                self.queue = nil
                queue.recycle(self)
            }
        }

        deinit {
            if !ran, let queue { queue.abandonAll() }
        }
    }
#endif
