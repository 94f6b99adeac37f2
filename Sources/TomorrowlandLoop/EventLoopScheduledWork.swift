import Tomorrowland
internal import TomorrowlandScheduling

/// The handle ``EventLoop/schedule(after:_:)`` returns: cancels one timer (the scheduling engine's
/// one cancellable timer handle).
typealias EventLoopScheduledWork = LoopTimerHandle<EventLoopTimerRemoval>

/// How an ``EventLoop`` removes the timer of a handle.
enum EventLoopTimerRemoval: LoopTimerRemoval {
    /// Removes the handle's timer from the loop's core, releasing its work: at once on the loop's
    /// thread, through a hop to the loop otherwise. After shutdown the timer is already gone, and
    /// there is nothing to do.
    static func removeTimer(of handle: EventLoopScheduledWork, from loop: EventLoop) {
        if loop.inEventLoop {
            if let timerID = handle.takeTimerID() { loop.core.cancel(timerID) }
        } else {
            _ = loop.submitOnLoop { [unowned loop] in
                if let timerID = handle.takeTimerID() { loop.core.cancel(timerID) }
            }
        }
    }
}
