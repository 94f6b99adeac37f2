#if NIO
    import Synchronization
    import Tomorrowland

    /// The handle of a timer of ``NIOEventLoopExecutor`` that needs one: every timer of
    /// `schedule(after:_:)`, and a self-guarded timer scheduled from another thread (its place in
    /// the heap is only known once the loop has inserted it).
    ///
    /// `cancel()` claims the handle (`pending` to `cancelled`) before anything else, so that, for
    /// `schedule(after:_:)`, whose work is wrapped in a closure that first claims the handle
    /// (`begin()`), the work cannot start once `cancel()` has returned, whichever thread called it.
    /// The timer itself is then removed on the loop's thread: at once from there, through a hop
    /// from anywhere else.
    ///
    /// `@unchecked Sendable`: `state` is atomic; `timerID` is touched on the loop's thread only;
    /// `executor` never changes.
    final class NIOLoopTimerHandle: PromiseScheduledWork, @unchecked Sendable {
        private enum State: UInt8 {
            case pending = 0
            case started = 1
            case cancelled = 2
        }

        private let executor: NIOEventLoopExecutor
        private let state = Atomic<UInt8>(State.pending.rawValue)
        /// Where the timer is in the loop's heap, once inserted. On the loop (unchecked exclusivity:
        /// plain reads and writes, no user code in between).
        @exclusivity(unchecked) var timerID: SchedulingCore.TimerID?

        init(executor: NIOEventLoopExecutor) {
            self.executor = executor
        }

        /// Whether neither the work started nor the handle was cancelled.
        var isPending: Bool {
            state.load(ordering: .acquiring) == State.pending.rawValue
        }

        /// Marks the handle cancelled without a timer to remove (the loop refused the timer).
        func markCancelled() {
            state.store(State.cancelled.rawValue, ordering: .releasing)
        }

        /// Claims the handle for the work about to run; `false` if it was cancelled.
        func begin() -> Bool {
            state.compareExchange(
                expected: State.pending.rawValue, desired: State.started.rawValue, ordering: .acquiringAndReleasing
            ).exchanged
        }

        /// Keeps the work from starting, if it has not, and removes the timer and releases the work
        /// on the loop's thread (at once when called there). Safe from any thread; idempotent.
        func cancel() {
            guard
                state.compareExchange(
                    expected: State.pending.rawValue, desired: State.cancelled.rawValue,
                    ordering: .acquiringAndReleasing
                ).exchanged
            else { return }
            executor.removeTimer(of: self)
        }

        /// Removes the timer from the heap, if it was inserted and is still there. On the loop.
        func removeTimer(from timers: NIOLoopTimers) {
            guard let timerID else { return }
            self.timerID = nil
            timers.remove(timerID)
        }
    }
#endif
