import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

extension EventLoop {
    /// Refuses work that arrived after shutdown, on the submitting thread.
    ///
    /// - A promise callback is abandoned: it does not run, what it captured is released, and the
    ///   promise it would have resolved ends cancelled (``Tomorrowland/PromiseJob/abandon()``).
    /// - A closure (``execute(_:)``, ``submit(_:)``) is released unrun.
    /// - A Swift Concurrency job is dropped: its task never resumes (there is no other thread
    ///   its isolation allows it to run on), and the memory it holds stays allocated, as with
    ///   SwiftNIO's loops.
    ///
    /// Closures and Concurrency jobs are reported once per loop on standard error.
    func refuseLateWork(_ work: consuming LoopWork) {
        switch consume work {
        case .promiseJob(let job):
            abandonLateJob(job)
        case .closure:
            reportLateWork("a closure (execute/submit/schedule) was released without running")
        case .job:
            reportLateWork(
                "a Swift Concurrency job was dropped; its task will never resume (end the tasks that prefer this loop before shutting it down)"
            )
        }
    }

    /// Abandons a promise job refused after shutdown, without growing the stack.
    ///
    /// Abandoning a job cancels its promise, whose own callbacks may be aimed at this loop too
    /// and come straight back here: a chain of a million `map`s on a shut-down loop would recurse
    /// a million deep. So the first thread to get here abandons, in a loop, every job that
    /// arrives (from any thread) until none is left; the others only add theirs to the list.
    func abandonLateJob(_ job: any PromiseJob) {
        let mustAbandon = inbox.withLock { inbox -> Bool in
            inbox.lateJobs.append(job)
            if inbox.isAbandoningLateJobs { return false }
            inbox.isAbandoningLateJobs = true
            return true
        }
        guard mustAbandon else { return }
        var batch: [any PromiseJob] = []
        while true {
            inbox.withLock { inbox in
                swap(&inbox.lateJobs, &batch)
                if batch.isEmpty { inbox.isAbandoningLateJobs = false }
            }
            if batch.isEmpty { return }
            // Outside the lock: abandoning runs the cancelled promises' inline callbacks.
            for job in batch { job.abandon() }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Writes one line to standard error the first time this loop drops late work.
    private func reportLateWork(_ what: String) {
        guard !hasReportedLateWork.exchange(true, ordering: .relaxed) else { return }
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        let line =
            "TomorrowlandLoop: work submitted to EventLoop 0x\(String(address, radix: 16)) after its shutdown: \(what). Reported once per loop.\n"
        // One write(2) to descriptor 2: no stdio buffer, no shared `FILE *` (unsafe in Swift 6).
        line.utf8CString.withUnsafeBufferPointer { bytes in
            _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count - 1)
        }
    }
}
