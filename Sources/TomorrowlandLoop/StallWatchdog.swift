import CTomorrowlandLoopSupport
import Dispatch
import Synchronization
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that reports loop work running past the stall threshold while it still runs.
///
/// It exists only while stall detection is on. It sleeps until the running work could reach the
/// threshold (at most one threshold at a time), reads what the loop published
/// (``LoopMonitor/readPublished()``) and reports work whose start is older than the threshold,
/// once per piece of work. It never touches the loop or its work: only the monitor's atomics and
/// settings.
final class StallWatchdog: @unchecked Sendable {
    // `@unchecked Sendable`: `state` is behind its lock, `wake` and `monitor` are thread-safe.

    /// The thread's name, as `/proc/self/task/*/comm` shows it (at most 15 characters).
    static let threadName = "twl-stall-watch"

    private struct State {
        var thread: pthread_t?
        var isStopped = false
        /// The thread's kernel id, once it runs (tests look for it in `/proc/self/task`).
        var threadID: Int32?
    }

    private let monitor: LoopMonitor
    private let state = LockedValue(State())
    /// Signalled to end a sleep early (stop).
    private let wake = DispatchSemaphore(value: 0)

    init(monitor: LoopMonitor) {
        self.monitor = monitor
    }

    /// Starts the thread, unless ``stop()`` came first.
    func start() {
        state.withLock { state in
            guard !state.isStopped, state.thread == nil else { return }
            var thread = pthread_t()
            // The thread's reference to this watchdog, released when the thread ends.
            let context = Unmanaged.passRetained(self).toOpaque()
            let status = pthread_create(
                &thread, nil,
                { context in
                    let watchdog = Unmanaged<StallWatchdog>.fromOpaque(context!).takeRetainedValue()
                    twl_loop_name_current_thread(StallWatchdog.threadName)
                    let threadID = twl_loop_current_thread_id()
                    watchdog.state.withLock { $0.threadID = threadID }
                    watchdog.watch()
                    return nil
                }, context)
            guard status == 0 else {
                Unmanaged<StallWatchdog>.fromOpaque(context).release()
                writeLineToStandardError(
                    "EventLoop: could not start the stall watchdog thread (error \(status)); stalls are not reported while they run"
                )
                return
            }
            state.thread = thread
        }
    }

    /// Stops the thread and waits for it to end, unless called on the watchdog thread itself (a
    /// report handler that turns detection off): the thread then ends after the handler returns.
    func stop() {
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

    /// The thread's kernel id, nil until it runs.
    var threadID: Int32? {
        state.withLock { $0.threadID }
    }

    private var isStopped: Bool {
        state.withLock { $0.isStopped }
    }

    /// The thread's body.
    private func watch() {
        var sleep: UInt64 = 1_000_000
        while true {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(clamping: sleep)))
            if isStopped { return }
            let settings = monitor.shared.withLock { $0.settings }
            guard let threshold = settings.stallThreshold, let report = settings.stallReport else { return }
            sleep = threshold
            guard let published = monitor.readPublished() else {
                // The loop is publishing new work right now: look again soon.
                sleep = min(threshold, 1_000_000)
                continue
            }
            guard published.identity.kind != .idle, published.start != 0 else { continue }
            let now = MonotonicClock.now()
            let elapsed = now > published.start ? now - published.start : 0
            if elapsed >= threshold {
                monitor.reportStall(
                    number: published.number, identity: published.identity, duration: elapsed, threshold: threshold,
                    isFinished: false, report: report)
            } else {
                // Wake when this work would reach the threshold.
                sleep = threshold - elapsed
            }
        }
    }
}
