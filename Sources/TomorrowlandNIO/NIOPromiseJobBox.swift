#if NIO
    import Tomorrowland
    internal import TomorrowlandScheduling

    /// A promise job on its way through a NIO loop's `execute`: runs it when the loop runs the
    /// closure, abandons it if the closure is dropped unrun.
    ///
    /// NIO's loops drop closures submitted after shutdown (printing an error) instead of reporting
    /// it, so the only sign is that the closure, and with it this box, is released without having
    /// run: `deinit` then settles the job with `abandon()`, so the promise it would have resolved
    /// ends cancelled instead of pending forever.
    ///
    /// `@unchecked Sendable`: `job` is written by `run()`, which the loop calls at most once, and
    /// read by `deinit`, which runs after the last release; the release after `run()` orders the
    /// two (reference counting is an acquire/release pair).
    /// NIOInvariants: "Released last".
    final class NIOPromiseJobBox: @unchecked Sendable {
        private var job: (any PromiseJob)?

        init(_ job: consuming any PromiseJob) {
            self.job = consume job
        }

        /// Runs the job, on the loop's thread.
        func run() {
            let job = self.job
            self.job = nil
            job?.run()
        }

        /// Runs the job through `monitor` (stall detection, tick counting), on the loop's thread.
        func run(monitoredBy monitor: LoopMonitor) {
            guard let job = self.job else { return }
            self.job = nil
            monitor.adoptSettingsIfChanged()
            monitor.run(.promiseJob(job), threshold: monitor.confined.stallThreshold) { $0.runWithoutJobs() }
        }

        deinit {
            job?.abandon()
        }
    }
#endif
