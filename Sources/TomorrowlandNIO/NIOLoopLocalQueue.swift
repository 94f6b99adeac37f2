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
    /// other tasks, so a long chain of callbacks cannot starve them.
    ///
    /// Late work: if the loop drops the drain unrun (an `EmbeddedEventLoop` after shutdown drops
    /// what it is given), the drain's ticket abandons what is queued when it is released: jobs end
    /// cancelled (`PromiseJob.abandon()`), closures are released unrun.
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
            // The ticket is the closure's only capture, so it is the closure's context: one
            // allocation per drain, not per item.
            let ticket = NIOLoopLocalDrainTicket(self)
            eventLoop.execute { ticket.run() }
        }

        /// Runs up to ``batchSize`` items, then queues another drain if items remain. On the loop.
        fileprivate func drain() {
            ExecutionFlags.running(on: self) {
                var remaining = Self.batchSize
                while remaining > 0, count > 0 {
                    remaining -= 1
                    switch removeFirst() {
                    case .closure(let closure): closure()
                    case .promiseJob(let job): job.run()
                    case .job: preconditionFailure("NIOLoopLocalQueue holds no Swift Concurrency jobs")
                    }
                }
            }
            if count == 0 {
                drainScheduled = false
            } else {
                scheduleDrain()
            }
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
    /// `@unchecked Sendable`: `ran` is written by `run()` on the loop's thread and read by
    /// `deinit` after the last release, which orders the two.
    private final class NIOLoopLocalDrainTicket: @unchecked Sendable {
        private let queue: NIOLoopLocalQueue
        private var ran = false

        init(_ queue: NIOLoopLocalQueue) {
            self.queue = queue
        }

        func run() {
            ran = true
            queue.drain()
        }

        deinit {
            if !ran { queue.abandonAll() }
        }
    }
#endif
