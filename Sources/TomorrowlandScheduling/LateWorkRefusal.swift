import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// What a loop that was shut down does with work that still reaches it, the same for
/// `EventLoop` and `TestLoop`: each loop owns one and hands it every refused item.
///
/// - A promise job is abandoned (``PromiseJob/abandon()``): its callback does not run, what it
///   captured is released, and the promise it would have resolved ends cancelled.
/// - A promise timer is released (``PromiseTimerJob/timerReleased()``): the promise waiting on it
///   ends cancelled.
/// - A closure is released unrun.
/// - A Swift Concurrency job is dropped: its task never resumes, since no other thread may run
///   it (its memory stays allocated, as with SwiftNIO's loops).
///
/// Closures and Concurrency jobs are reported once per loop on standard error.
package final class LateWorkRefusal: Sendable {
    private struct State {
        /// Promise jobs waiting to be abandoned.
        var jobs: [any PromiseJob] = []
        /// Whether a thread is abandoning ``jobs`` now; it takes the ones added meanwhile too.
        var isAbandoning = false
        /// Whether the one diagnostic line was written.
        var hasReported = false
    }

    private let state = LockedValue(State())
    /// How the line names the loop's kind, e.g. "TomorrowlandLoop: ... EventLoop".
    private let loopKind: String

    /// A refusal policy for a loop described as `loopKind` ("EventLoop", "TestLoop").
    package init(loopKind: String) {
        self.loopKind = loopKind
    }

    /// Refuses `work`, which reached `loop` after its shutdown, on the calling thread.
    package func refuse(_ work: consuming LoopWork, on loop: AnyObject) {
        switch consume work {
        case .promiseJob(let job):
            abandon(job)
        case .promiseTimer(let timer):
            timer.timerReleased()
        case .closure:
            report("a closure (execute/submit/schedule) was released without running", on: loop)
        case .job:
            report(
                "a Swift Concurrency job was dropped; its task will never resume (end the tasks that prefer this loop before shutting it down)",
                on: loop)
        }
    }

    /// Abandons a promise job without growing the stack.
    ///
    /// Abandoning a job cancels its promise, whose own callbacks may be aimed at the same loop
    /// and come straight back here: a chain of a million `always` links on a shut-down loop would
    /// recurse a million deep. So the first thread to get here abandons, in a loop, every job that
    /// arrives (from any thread) until none is left; the others only add theirs to the list.
    private func abandon(_ job: any PromiseJob) {
        let mustAbandon = state.withLock { state -> Bool in
            state.jobs.append(job)
            if state.isAbandoning { return false }
            state.isAbandoning = true
            return true
        }
        guard mustAbandon else { return }
        var batch: [any PromiseJob] = []
        while true {
            state.withLock { state in
                swap(&state.jobs, &batch)
                if batch.isEmpty { state.isAbandoning = false }
            }
            if batch.isEmpty { return }
            // Outside the lock: abandoning runs the cancelled promises' inline callbacks.
            for job in batch { job.abandon() }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Writes one line to standard error the first time `loop` drops work.
    private func report(_ what: String, on loop: AnyObject) {
        let isFirst = state.withLock { state -> Bool in
            defer { state.hasReported = true }
            return !state.hasReported
        }
        guard isFirst else { return }
        let address = UInt(bitPattern: ObjectIdentifier(loop))
        let line =
            "Tomorrowland: work submitted to \(loopKind) 0x\(String(address, radix: 16)) after its shutdown: \(what). Reported once per loop.\n"
        // One write(2) to descriptor 2: no stdio buffer, no shared `FILE *` (unsafe in Swift 6).
        line.utf8CString.withUnsafeBufferPointer { bytes in
            _ = write(2, bytes.baseAddress, bytes.count - 1)
        }
    }
}
