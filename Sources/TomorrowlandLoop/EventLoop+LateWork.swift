import Tomorrowland
internal import TomorrowlandScheduling

extension EventLoop {
    /// Refuses work that arrived after shutdown, on the submitting thread, with the loops' one
    /// policy (`LateWorkRefusal`): a promise callback is abandoned (not run, its
    /// promise cancelled), a closure released, a Swift Concurrency job dropped; closures and jobs
    /// are reported once per loop on standard error.
    func refuseLateWork(_ work: consuming LoopWork) {
        lateWork.refuse(work, on: self)
    }
}
