#if NIO
    import NIOCore
    import Tomorrowland

    /// The work a ``NIOEventLoopExecutor`` is given on its loop's own thread: a FIFO that one NIO
    /// task drains, up to ``batchSize`` items at a time.
    ///
    /// Why: a NIO task is expensive when it carries one callback. Measured with callgrind on a
    /// one-thread `MultiThreadedEventLoopGroup` (Benchmarks, W1@NIO), one `execute` per callback
    /// cost about 2,400 instructions a hop: a closure box, the task lock, and NIO's tick loop,
    /// which pops tasks in batches under the lock and reads the clock once per batch, so a chain
    /// of callbacks (one ready at a time) paid a whole batch per callback. Queued here, a hop is
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
    /// `@unchecked Sendable`: everything but `eventLoop` is touched only on the loop's thread
    /// (appends come from `inEventLoop` callers, drains run on the loop), one call at a time.
    final class NIOLoopLocalQueue: @unchecked Sendable {
        /// The most items one NIO task runs before the drain yields to the loop's other tasks.
        static let batchSize = 1024

        // A ring buffer whose capacity is a power of two, so wrapping is a mask; items move in and
        // out (`initialize(to:)`/`move()`) without an extra retain and release.
        private var storage: UnsafeMutablePointer<LoopWork>
        private var capacity = 16
        private var head = 0
        private var count = 0
        /// Whether a drain is queued on the loop or running.
        private var drainScheduled = false
        /// A ticket whose drain ran, kept for the next drain. It holds no reference to the queue
        /// while it is here (see ``NIOLoopLocalDrainTicket``), so there is no cycle.
        private var spareTicket: NIOLoopLocalDrainTicket?
        /// The loop, to queue a drain on. Unowned: only used on the loop's thread (an append or a
        /// drain in progress), where the loop is alive; the executor holds it weakly.
        private unowned(unsafe) let eventLoop: any EventLoop

        init(eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
            storage = .allocate(capacity: capacity)
        }

        deinit {
            abandonAll()
            storage.deallocate()
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

        /// Queues `item` and, unless a drain is already queued or running, queues one on the loop.
        /// Call on the loop's thread only.
        func append(_ item: consuming LoopWork) {
            if count == capacity { grow() }
            (storage + ((head + count) & (capacity - 1))).initialize(to: item)
            count += 1
            if !drainScheduled { scheduleDrain() }
        }

        private func scheduleDrain() {
            drainScheduled = true
            // A ticket whose drain ran comes back to `spareTicket` (or, when its drain queues the
            // next one, is used again at once): no allocation per drain once the first one ran.
            enqueue(spareTicket.take() ?? NIOLoopLocalDrainTicket())
        }

        /// Queues a drain on the loop with `ticket`. On the loop.
        fileprivate func enqueue(_ ticket: NIOLoopLocalDrainTicket) {
            ticket.arm(self)
            // The ticket is the closure's only capture, so it is the closure's context (no box).
            eventLoop.execute { ticket.run() }
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
            ExecutionFlags.running(on: self) {
                while ran < Self.batchSize, count > 0 {
                    ran += 1
                    switch removeFirst() {
                    case .closure(let closure): closure()
                    case .promiseJob(let job): job.run()
                    case .job: preconditionFailure("NIOLoopLocalQueue holds no Swift Concurrency jobs")
                    }
                }
            }
            if ran == 0 {
                drainScheduled = false
                return false
            }
            return true
        }

        /// Settles everything queued without running it: the loop dropped the drain.
        fileprivate func abandonAll() {
            drainScheduled = false
            while count > 0 {
                if case .promiseJob(let job) = removeFirst() { job.abandon() }
            }
        }

        private func removeFirst() -> LoopWork {
            let item = (storage + head).move()
            head = (head + 1) & (capacity - 1)
            count -= 1
            return item
        }

        private func grow() {
            let newStorage = UnsafeMutablePointer<LoopWork>.allocate(capacity: capacity * 2)
            // Unwrap the ring into the front of the new buffer.
            let firstRun = min(count, capacity - head)
            newStorage.moveInitialize(from: storage + head, count: firstRun)
            (newStorage + firstRun).moveInitialize(from: storage, count: count - firstRun)
            storage.deallocate()
            storage = newStorage
            capacity *= 2
            head = 0
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
    fileprivate final class NIOLoopLocalDrainTicket: @unchecked Sendable {
        // Strong while a drain is queued (the queue must outlive its drain), `nil` in the spare slot
        // (so that the queue and its spare ticket do not keep each other alive).
        private var queue: NIOLoopLocalQueue?
        private var ran = false

        /// Prepares the ticket for a drain of `queue` about to be queued. On the loop.
        func arm(_ queue: NIOLoopLocalQueue) {
            self.queue = queue
            ran = false
        }

        func run() {
            guard let queue else { return }
            ran = true
            if queue.drain() {
                queue.enqueue(self)
            } else {
                self.queue = nil
                queue.recycle(self)
            }
        }

        deinit {
            if !ran, let queue { queue.abandonAll() }
        }
    }
#endif
