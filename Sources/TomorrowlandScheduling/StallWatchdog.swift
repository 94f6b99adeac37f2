import Dispatch
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// What a ``StallWatchdog`` watches: a loop's publication of its running work, the threshold,
/// and where a stall goes.
package protocol StallWatchdogClient: AnyObject, Sendable {
    /// What the loop publishes.
    var publication: StallPublication { get }
    /// The threshold in nanoseconds, nil once detection is off (the watchdog then ends). Called
    /// on each wake-up.
    func watchdogThreshold() -> UInt64?
    /// Reports the work numbered `number`, still running for `duration` nanoseconds, past
    /// `threshold`, unless it was reported already (``StallPublication/claimReport(number:)``).
    /// Called on the watchdog thread.
    func reportStillRunning(number: UInt64, identity: LoopWorkIdentity, duration: UInt64, threshold: UInt64)
}

/// The thread that reports loop work running past the stall threshold while it still runs, for
/// `EventLoop` and the NIO executor.
///
/// It exists only while stall detection is on. It sleeps until the running work could reach the
/// threshold (at most one threshold at a time), reads what the loop published
/// (``StallPublication/readPublished()``) and reports work whose start is older than the
/// threshold, once per piece of work. It never touches the loop or its work: only the
/// publication's atomics and what its client gives.
///
/// `@unchecked Sendable`: `state` is behind its lock, `wake` and `client` are thread-safe.
package final class StallWatchdog: @unchecked Sendable {
    private struct State {
        var thread: pthread_t?
        var isStopped = false
        /// What ``onStart`` returned on the thread (a thread id, for tests).
        var threadID: Int32?
    }

    private let client: any StallWatchdogClient
    /// Run first on the new thread (to name it); returns its id, if the caller has one.
    private let onStart: @Sendable () -> Int32?
    /// For the message if the thread cannot start.
    private let ownerName: String
    private let state = LockedValue(State())
    /// Signalled to end a sleep early (stop).
    private let wake = DispatchSemaphore(value: 0)

    /// A watchdog for `client`, not started. `ownerName` names the loop type in the one message
    /// it may write (its thread could not start); `onStart` runs first on its thread.
    package init(
        client: any StallWatchdogClient, ownerName: String, onStart: @escaping @Sendable () -> Int32? = { nil }
    ) {
        self.client = client
        self.ownerName = ownerName
        self.onStart = onStart
    }

    /// Starts the thread, unless ``stop()`` came first.
    package func start() {
        state.withLock { state in
            guard !state.isStopped, state.thread == nil else { return }
            var thread = pthread_t()
            // The thread's reference to this watchdog, released when the thread ends.
            let context = Unmanaged.passRetained(self).toOpaque()
            let status = pthread_create(
                &thread, nil,
                { context in
                    let watchdog = Unmanaged<StallWatchdog>.fromOpaque(context!).takeRetainedValue()
                    let threadID = watchdog.onStart()
                    watchdog.state.withLock { $0.threadID = threadID }
                    watchdog.watch()
                    return nil
                }, context)
            guard status == 0 else {
                Unmanaged<StallWatchdog>.fromOpaque(context).release()
                writeLineToStandardError(
                    "\(ownerName): could not start the stall watchdog thread (error \(status)); stalls are not reported while they run"
                )
                return
            }
            state.thread = thread
        }
    }

    /// Stops the thread and waits for it to end, unless called on the watchdog thread itself (a
    /// report handler that turns detection off): the thread then ends after the handler returns.
    package func stop() {
        let thread = state.withLock { state -> pthread_t? in
            state.isStopped = true
            return state.thread.take()
        }
        wake.signal()
        guard let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// What ``init(client:ownerName:onStart:)``'s `onStart` returned, nil until the thread runs.
    package var threadID: Int32? {
        state.withLock { $0.threadID }
    }

    private var isStopped: Bool {
        state.withLock { $0.isStopped }
    }

    /// The thread's body.
    private func watch() {
        var sleep: UInt64 = 1_000_000
        let publication = client.publication
        while true {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(clamping: sleep)))
            if isStopped { return }
            guard let threshold = client.watchdogThreshold() else { return }
            sleep = threshold
            guard let published = publication.readPublished() else {
                // The loop is publishing new work right now: look again soon.
                sleep = min(threshold, 1_000_000)
                continue
            }
            guard published.identity.kind != .idle, published.start != 0 else { continue }
            let now = StallPublication.now()
            let elapsed = now > published.start ? now - published.start : 0
            if elapsed >= threshold {
                client.reportStillRunning(
                    number: published.number, identity: published.identity, duration: elapsed, threshold: threshold)
            } else {
                // Wake when this work would reach the threshold.
                sleep = threshold - elapsed
            }
        }
    }
}
