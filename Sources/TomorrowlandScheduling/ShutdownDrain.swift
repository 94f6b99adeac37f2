/// The middle of a loop's shutdown, written once for `EventLoop` and `TestLoop`: release the
/// pending timers, run the ready work in rounds, and close once nothing is left.
///
/// A loop conforms by saying how it reaches its ``SchedulingCore`` (directly on the loop's thread,
/// or under a lock), how work submitted from other threads joins it, how it closes, and how it runs
/// one item; ``drainForShutdown(maxRounds:)`` is the shared sequence. What comes before it (an
/// `EventLoop` cancels its watchers and TCP resources) and after it (refusing what is left when
/// work keeps queueing work, freeing libevent objects) stays with each loop.
package protocol ShutdownDrain {
    /// Runs `body` with the loop's core; `body` runs no user code.
    func withCore<Result>(_ body: (SchedulingCore) -> Result) -> Result
    /// Moves work that other threads submitted into the core (nothing to do where they write to
    /// it directly).
    func takeSubmissions()
    /// Closes the loop if nothing is queued anywhere, atomically with respect to submissions, so
    /// that everything the loop accepted runs; returns whether it closed.
    func closeIfEmpty() -> Bool
    /// Runs one item on the calling thread, as the loop runs all work
    /// (``LoopWork/run(asTaskExecutor:)``).
    func perform(_ work: LoopWork)
}

extension ShutdownDrain {
    /// Releases the pending timers, then runs the ready work (and what it submits) in rounds, at
    /// most `maxRounds`, with timers scheduled meanwhile released before the next item runs; closes
    /// the loop once nothing is queued. The clock does not move.
    ///
    /// Timers are released outside every lock: a released promise timer cancels its promise, whose
    /// callbacks on this loop join the ready work of the same round.
    ///
    /// - Returns: Whether the loop closed; false when work kept queueing work for `maxRounds`
    ///   rounds (the caller then closes and refuses what is left).
    package func drainForShutdown(maxRounds: Int) -> Bool {
        withCore { $0.endRound() }
        for _ in 0..<maxRounds {
            // Submissions first, so that timers other threads scheduled are released with the rest.
            takeSubmissions()
            var timers = withCore { $0.removeAllTimers() }
            releaseUnrun(&timers)
            let count = withCore { $0.readyCount }
            if count == 0 {
                if closeIfEmpty() { return true }
                continue
            }
            withCore { $0.beginRound(at: $0.currentTime) }
            for _ in 0..<count {
                // Timers are released before each item, so a round only ever yields ready work.
                var (timers, work) = withCore { ($0.removeAllTimers(), $0.nextInRound()) }
                releaseUnrun(&timers)
                guard let work else { break }
                perform(work)
            }
            withCore { $0.endRound() }
        }
        return false
    }

    /// Releases timers removed for shutdown, in key order, each before the next (a promise timer
    /// is told it will never fire, ``LoopWork/releaseUnrun()``), and leaves `timers` empty.
    private func releaseUnrun(_ timers: inout [LoopWork]) {
        guard !timers.isEmpty else { return }
        // Popped from the end of the reversed array: each timer is moved out and released before
        // the next, as dropping the array in order did.
        timers.reverse()
        while let timer = timers.popLast() { timer.releaseUnrun() }
    }
}
