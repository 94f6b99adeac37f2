import Tomorrowland
internal import TomorrowlandScheduling

/// The handle ``TestLoop/schedule(after:_:)`` returns: cancels one virtual timer.
///
/// A value of three words (the loop and the timer's identifier), so returning it as
/// `any PromiseScheduledWork` allocates nothing.
struct TestLoopScheduledWork: PromiseScheduledWork {
    let loop: TestLoop
    let id: PromiseTimerID

    /// Removes the timer in O(log n) and releases its work, if it has not run yet.
    ///
    /// Safe from any thread; does nothing after the timer ran or was cancelled.
    func cancel() {
        loop.cancel(id)
    }
}

/// The handle ``TestLoop/schedule(after:_:)`` returns after shutdown: the work was not kept, so
/// there is nothing to cancel.
struct RefusedScheduledWork: PromiseScheduledWork {
    /// Does nothing: the work never ran and is released already.
    func cancel() {}
}
