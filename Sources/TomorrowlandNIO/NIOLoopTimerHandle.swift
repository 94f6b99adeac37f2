#if NIO
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// The handle of a timer of ``NIOEventLoopExecutor`` that needs one: every timer of
    /// `schedule(after:_:)`, and a self-guarded timer scheduled from another thread (its place in
    /// the heap is only known once the loop has inserted it). The scheduling engine's one
    /// cancellable timer handle, as `EventLoop`'s.
    typealias NIOLoopTimerHandle = LoopTimerHandle<NIOLoopTimerRemoval>

    /// How a ``NIOEventLoopExecutor`` removes the timer of a handle.
    enum NIOLoopTimerRemoval: LoopTimerRemoval {
        /// Removes the timer of `handle` from the executor's heap, if it was inserted and is still
        /// there, on the loop's thread (now, or through a hop).
        static func removeTimer(of handle: NIOLoopTimerHandle, from executor: NIOEventLoopExecutor) {
            if executor.isCurrent {
                if let timerID = handle.takeTimerID() { executor.timers.remove(timerID) }
                return
            }
            // A loop that is gone or shut down has released its timers already; NIO drops the hop.
            guard let eventLoop = executor.eventLoop else { return }
            let timers = executor.timers
            eventLoop.execute {
                if let timerID = handle.takeTimerID() { timers.remove(timerID) }
            }
        }
    }
#endif
