import Tomorrowland
internal import TomorrowlandScheduling

/// How the timer handle ``TestLoop/schedule(after:_:)`` returns (a `LoopTimerReference`, three
/// words: returned as `any PromiseScheduledWork`, it allocates nothing) reaches the loop's virtual
/// timers: under the loop's lock, from any thread.
enum TestLoopTimerAccess: LoopTimerAccess {
    static func reachesTimers(of loop: TestLoop) -> Bool {
        true
    }

    /// In O(log n); the work is released after unlocking.
    static func removeTimer(_ id: PromiseTimerID, from loop: TestLoop) {
        loop.cancel(id)
    }

    /// Runs `body` at once: every thread reaches the loop's timers, so nothing hops.
    static func hop(to loop: TestLoop, _ body: @escaping @Sendable () -> Void) {
        body()
    }
}

/// The handle ``TestLoop/schedule(after:_:)`` returns after shutdown: the work was not kept, so
/// there is nothing to cancel.
struct RefusedScheduledWork: PromiseScheduledWork {
    /// Does nothing: the work never ran and is released already.
    func cancel() {}
}
