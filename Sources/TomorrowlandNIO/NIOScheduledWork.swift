#if NIO
    import NIOCore
    import Tomorrowland

    /// A timer of ``NIOEventLoopExecutor``: the handle `schedule(after:_:)` returns.
    ///
    /// The work is taken out of the state exactly once, by whichever comes first: the loop firing
    /// the callback (runs it), `cancel()`, NIO cancelling the callback (at shutdown), or NIO
    /// dropping the callback unrun (all three release it). NIO's own cancellation is then only a
    /// clean-up that removes the callback from the loop's timer heap early.
    ///
    /// Why a separate ``Handler``: a NIO loop that was shut down drops a scheduled callback without
    /// calling it or throwing (it prints an error). The loop is the only owner of the handler's
    /// ``Owner``, whose `deinit` then releases the work, so that a promise waiting on the timer
    /// (`timeout`, `delay`) learns that it will never fire, instead of the handle keeping the work
    /// alive.
    ///
    /// `@unchecked Sendable`: `state` is only touched while holding `lock`.
    final class NIOScheduledWork: PromiseScheduledWork, @unchecked Sendable {
        private struct State {
            /// The work, until it runs or is released.
            var work: (@Sendable () -> Void)?
            /// NIO's handle, once `scheduleCallback` returned and while the work is pending.
            var callback: NIOScheduledCallback?
        }

        private let lock = SpinLock()
        private var state: State

        init(_ work: @escaping @Sendable () -> Void) {
            state = State(work: work)
        }

        /// A handler for `scheduleCallback`; give it to the loop only (see ``Owner``).
        func makeHandler() -> Handler {
            Handler(owner: Owner(self))
        }

        /// Records NIO's handle of the scheduled callback, or cancels it at once if the work was
        /// already taken (cancelled by another thread before `scheduleCallback` returned).
        func attach(_ callback: NIOScheduledCallback) {
            let pending: Bool = lock.withLock {
                guard state.work != nil else { return false }
                state.callback = callback
                return true
            }
            if !pending { callback.cancel() }
        }

        /// Keeps the work from starting, if it has not yet, and releases it; safe from any thread.
        func cancel() {
            let (work, callback) = take()
            // Outside the lock: NIO's cancel takes the loop's lock and calls
            // `didCancelScheduledCallback` under it, and releasing `work` may run deinitializers.
            callback?.cancel()
            _ = work
        }

        /// The loop's timer fired: runs the work unless it was taken already.
        fileprivate func fire() {
            let (work, _) = take()
            work?()
        }

        /// Releases the work unrun, if it is still there (NIO cancelled or dropped the callback).
        fileprivate func release() {
            _ = take()
        }

        /// Takes the work and NIO's handle out of the state, leaving it empty.
        private func take() -> (work: (@Sendable () -> Void)?, callback: NIOScheduledCallback?) {
            // lock()/unlock() rather than withLock: a closure returned through withLock's generic
            // result is reabstracted, which cost two allocations per cancel (measured).
            lock.lock()
            let taken = (state.work, state.callback)
            state = State()
            lock.unlock()
            return taken
        }

        /// What the loop holds for the timer: forwards firing and cancellation to the timer.
        struct Handler: NIOScheduledCallbackHandler, Sendable {
            fileprivate let owner: Owner

            func handleScheduledCallback(eventLoop: some EventLoop) {
                owner.timer.fire()
            }

            func didCancelScheduledCallback(eventLoop: some EventLoop) {
                owner.timer.release()
            }
        }

        /// Owned by the loop alone, through the ``Handler``: released when the loop lets go of
        /// the callback, which releases the work if the loop never ran or cancelled it.
        final class Owner: Sendable {
            fileprivate let timer: NIOScheduledWork

            fileprivate init(_ timer: NIOScheduledWork) {
                self.timer = timer
            }

            deinit {
                timer.release()
            }
        }
    }
#endif
