#if ServiceLifecycle
    import ServiceLifecycle
    import Synchronization
    import Tomorrowland
    import TomorrowlandLoop

    /// What ``EventLoopGroupService`` and ``EventLoopService`` share: the registrations, the wait
    /// for a trigger, the drain within the grace period, and the order of the shutdown. The
    /// services supply how their loops are watched and shut down.
    ///
    /// The state lives in a ``LoopServiceStateMachine`` behind a mutex; every user callback (the
    /// hooks, `TCPListener.shutdownGracefully`) is called after the lock is released.
    final class LoopServiceRunner: Sendable {
        /// What ended the wait of `run()`.
        enum Trigger: Sendable, Equatable {
            case gracefulShutdown
            case cancellation
            case loopsShutDown
        }

        /// What ended the drain.
        enum DrainEnd: Sendable, Equatable {
            case drained
            case gracePeriodOver
            case cancellation
            case loopsShutDown
        }

        let gracePeriod: Duration
        private let state = LockedValue(LoopServiceStateMachine())
        private let trigger = OneShotGate<Trigger>()
        private let drainEnd = OneShotGate<DrainEnd>()

        init(gracePeriod: Duration) {
            precondition(gracePeriod >= .zero, "a loop service's grace period must not be negative")
            self.gracePeriod = gracePeriod
        }

        func add(listener: TCPListener) -> Bool {
            let registered = state.withLock { $0.register(listener: listener) }
            // Too late to drain it: the graceful shutdown is past the point where listeners stop.
            if !registered { listener.close() }
            return registered
        }

        func add(hook: GracefulShutdownHook) -> Bool {
            state.withLock { $0.register(hook: hook) }
        }

        /// The service's loops have all shut down (their threads exited), whoever asked: ends the
        /// wait for a trigger, or the drain. Safe from any thread.
        func loopsShutDown() {
            trigger.settle(.loopsShutDown)
            drainEnd.settle(.loopsShutDown)
        }

        /// The body of the services' `run()`.
        ///
        /// - Parameters:
        ///   - startWatching: Called once `run()` is accepted: starts driving the loops if the
        ///     service does, and arranges for ``loopsShutDown()`` to be called when they are gone.
        ///   - shutDownLoops: Shuts the loops down and returns once their threads have exited.
        func run(
            startWatching: () -> Void,
            shutDownLoops: () async -> Void
        ) async throws(EventLoopServiceError) {
            if let refusal = state.withLock({ $0.start() }) { throw refusal }
            startWatching()
            await withTaskCancellationHandler {
                let cause = await withGracefulShutdownHandler {
                    await trigger.wait()
                } onGracefulShutdown: { [trigger] in
                    // Called under swift-service-lifecycle's lock: only settle, never call out.
                    trigger.settle(.gracefulShutdown)
                }
                if cause == .gracefulShutdown && !Task.isCancelled {
                    await drain()
                }
            } onCancel: { [trigger, drainEnd] in
                trigger.settle(.cancellation)
                drainEnd.settle(.cancellation)
            }
            state.withLock { $0.beginShutdown() }
            await shutDownLoops()
            state.withLock { $0.finish() }
        }

        /// Stops the listeners accepting and lets their connections flush, then runs the hooks,
        /// and waits until every one of them has settled, the grace period is over, the task is
        /// cancelled, or the loops are gone. Whatever is still pending then gets a cancellation
        /// request.
        private func drain() async {
            let (listeners, hooks) = state.withLock { $0.beginDrain() }
            let participants =
                listeners.map { listener in
                    GracefulShutdownHook { gracePeriod in listener.shutdownGracefully(within: gracePeriod) }
                } + hooks
            let countdown = DrainCountdown(participants.count)
            if participants.isEmpty { drainEnd.settle(.drained) }
            let graceTimer = Task { [drainEnd, gracePeriod] in
                do {
                    try await Task.sleep(for: gracePeriod)
                    drainEnd.settle(.gracePeriodOver)
                } catch {
                    // Cancelled: the drain ended first.
                }
            }
            var started: [DrainInProgress] = []
            started.reserveCapacity(participants.count)
            for participant in participants {
                started.append(
                    participant.start(gracePeriod) { [drainEnd] in
                        if countdown.participantSettled() { drainEnd.settle(.drained) }
                    })
            }
            let end = await drainEnd.wait()
            graceTimer.cancel()
            if end != .drained {
                // A promise already settled ignores the request.
                for drain in started { drain.requestCancel() }
            }
        }
    }

    /// Counts the drain's participants down to zero.
    final class DrainCountdown: Sendable {
        private let remaining: Atomic<Int>

        init(_ count: Int) {
            remaining = Atomic(count)
        }

        /// One participant's promise settled; true for the last one.
        func participantSettled() -> Bool {
            remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0
        }
    }
#endif
