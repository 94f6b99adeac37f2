import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// What a daemon does with the signals that ask it to stop: make sure they can reach its
/// ``EventLoop``, then hear the first one there.
///
/// ```swift
/// TerminationSignals.unblock()  // first thing in main, before any thread exists
/// let loop = EventLoop()
/// // … start serving on the loop …
/// let stopped = TerminationSignals.first(on: loop).then(on: .loop(loop)) { signal in
///     // stop accepting, let the replies already produced flush, then:
///     loop.shutdown()
/// }
/// loop.run()  // returns once the loop has shut down
/// ```
///
/// Why unblocking, and not blocking them everywhere but on the loop: an ``EventLoop`` hears a
/// signal through libevent, which installs a process-wide handler (`sigaction`) that forwards
/// each delivery to the loop through a socket. The kernel runs that handler on any thread that
/// has the signal unblocked, so it does not matter which thread gets it, but a signal blocked in
/// every thread is never handled: it stays pending and the daemon does not stop. That is what
/// happens when a parent starts the daemon with the signals blocked (a blocked mask is inherited
/// across `fork` and `exec`: test runners, and any program spawning from a libdispatch worker,
/// do it), hence ``unblock(_:)``.
///
/// `SIGPIPE` needs nothing: the library's sockets write with `MSG_NOSIGNAL`, so a peer that went
/// away rejects a write instead of raising the signal.
public enum TerminationSignals {
    /// `SIGTERM` (what `kill`, systemd and container runtimes send) and `SIGINT` (Ctrl-C).
    public static let standard: [Int32] = [SIGTERM, SIGINT]

    /// Unblocks `signals` in the calling thread's signal mask.
    ///
    /// Call it at the start of `main`, before creating threads (an ``EventLoopGroup``,
    /// Dispatch work): a new thread inherits the mask of the thread that creates it, so every
    /// thread made afterwards can then run libevent's handler. Threads that exist already keep
    /// their own mask, which does no harm as long as one thread has the signals unblocked.
    ///
    /// - Parameter signals: The signals to unblock; ``standard`` by default.
    /// - Returns: Those of `signals` that were blocked before the call, in the order given
    ///   (empty when the mask was already right).
    @discardableResult
    public static func unblock(_ signals: [Int32] = standard) -> [Int32] {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        var previous = sigset_t()
        let status = pthread_sigmask(SIG_UNBLOCK, &set, &previous)
        precondition(status == 0, "TerminationSignals.unblock: pthread_sigmask failed with \(status)")
        return signals.filter { sigismember(&previous, $0) == 1 }
    }

    /// A promise fulfilled with the first of `signals` that the process receives, on `loop`'s
    /// thread.
    ///
    /// Safe from any thread, and the watchers are in place when this returns (it registers them
    /// with ``EventLoop/watch(signal:_:)``, which waits for the loop while another thread drives
    /// it): a signal sent after the call, by a supervisor that saw the daemon report ready, is
    /// never handled by its default action. Call it before announcing readiness. The watchers
    /// stay until the loop shuts down, so a second signal during a graceful shutdown (a second
    /// Ctrl-C, a repeated `kill`) does nothing instead of
    /// ending the process with the signal's default action; a daemon that wants a second signal
    /// to force its exit watches it itself with ``EventLoop/watch(signal:_:)``. Requesting
    /// cancellation before a signal came removes the watchers and cancels the promise.
    ///
    /// The rules of ``EventLoop/watch(signal:_:)`` apply: the loop that watches first owns signal
    /// delivery for the process, so watch every signal on that one loop.
    ///
    /// - Parameters:
    ///   - signals: The signals to wait for; ``standard`` by default.
    ///   - loop: The loop that hears them.
    /// - Returns: A promise fulfilled on `loop`'s thread with the signal's number; rejected with
    ///   ``EventLoopError/invalidSignal(_:)`` or ``EventLoopError/signalsOwnedByAnotherLoop``
    ///   (then no watcher is left); cancelled if the loop is shut down, or shuts down before a
    ///   signal came.
    public static func first(
        of signals: [Int32] = standard, on loop: EventLoop
    ) -> Promise<Int32, EventLoopError> {
        let (promise, resolver) = Promise<Int32, EventLoopError>.makeWithResolver()
        // The handlers keep the holder until the loop releases them (at shutdown, which then
        // cancels the promise if no signal came); later deliveries find the promise resolved and
        // do nothing.
        let holder = CancellingResolver(resolver)
        var watchers: [EventLoopWatcher] = []
        do {
            for signal in signals {
                watchers.append(try loop.watch(signal: signal) { holder.resolver.fulfill(with: $0) })
            }
        } catch {
            // Settled before the watchers go: releasing their handlers releases the holder, which
            // would cancel the promise. A loop already shut down cancels it, as a shutdown before
            // a signal does.
            switch error as? EventLoopError {
            case .shutDown?: resolver.cancel()
            case let known?: resolver.reject(with: known)
            case nil: resolver.reject(with: .libeventFailure(operation: "watch(signal:)"))
            }
            for watcher in watchers { watcher.cancel() }
            return promise
        }
        resolver.onRequestCancel(on: .immediate) { [watchers] resolver in
            for watcher in watchers { watcher.cancel() }
            resolver.cancel()
        }
        return promise
    }
}
