#if NIO
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// The handle of a self-guarded timer that ``NIOEventLoopExecutor`` scheduled on its loop's
    /// thread: the executor and the timer's place in the heap, a value that fits in an existential's
    /// inline buffer, so the handle costs no allocation.
    ///
    /// Self-guarded work checks by itself whether it is still wanted, so `cancel()` needs no state
    /// of its own: on the loop's thread it removes the timer and releases the work at once; from
    /// another thread it hops to the loop to do so, and the work may start meanwhile. A stale
    /// place (the timer ran or was removed, even if its slot was reused since) removes nothing.
    struct NIOLoopTimerReference: PromiseScheduledWork {
        let executor: NIOEventLoopExecutor
        let timerID: PromiseTimerID

        /// Removes the timer, if it is still pending, and releases its work. Safe from any thread.
        func cancel() {
            executor.removeTimer(timerID)
        }
    }
#endif
