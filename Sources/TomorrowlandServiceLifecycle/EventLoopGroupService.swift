#if ServiceLifecycle
    import Dispatch
    import ServiceLifecycle
    import Tomorrowland
    import TomorrowlandLoop

    /// An `EventLoopGroup` as a swift-service-lifecycle `Service`: `ServiceGroup` runs it, and its
    /// graceful shutdown drains the servers on the loops before the loops shut down.
    ///
    /// ```swift
    /// let group = EventLoopGroup(loopCount: 4)
    /// let service = EventLoopGroupService(group: group, gracePeriod: .seconds(10))
    /// let listener = try TCPListener.listen(host: "0.0.0.0", port: 8080, on: group.next()) { connection in
    ///     // serve the connection on its loop
    /// }
    /// service.addListener(listener)
    /// let serviceGroup = ServiceGroup(
    ///     services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    /// try await serviceGroup.run()
    /// ```
    ///
    /// The group's threads drive its loops from the moment the group exists; ``run()`` does not
    /// drive them, it supervises: it waits for a graceful shutdown or for cancellation, then shuts
    /// the loops down, and returns once every thread of the group has exited. On
    /// **graceful shutdown** (a signal the `ServiceGroup` traps, `triggerGracefulShutdown()`):
    ///
    /// 1. **Accepting stops**: every listener given to ``addListener(_:)`` gets
    ///    `TCPListener.shutdownGracefully(within:)` with the ``gracePeriod``: it closes, and the
    ///    connections it accepted send the output already queued, then close.
    /// 2. **In-flight work finishes**: every hook given to ``onGracefulShutdown(_:)`` is called, in
    ///    registration order, and the service waits for the promises they return.
    /// 3. Once every listener's connections are closed and every hook's promise has resolved, or
    ///    once the grace period is over, the promises still pending get `requestCancel()`, and the
    ///    **loops shut down** with `EventLoop.shutdown()`'s outcomes: ready work still runs, timers
    ///    are cancelled, open connections close; work that arrives afterwards is abandoned (a
    ///    promise callback aimed at a loop does not run and its promise ends cancelled).
    ///
    /// **Cancellation** of the task running ``run()`` (the `ServiceGroup` cancels on a service's
    /// error, a cancellation signal, or once its `maximumGracefulShutdownDuration` is over) skips
    /// or ends the wait of step 3 at once: pending promises get `requestCancel()`, and the loops
    /// shut down. ``run()`` returns without an error in both cases: the shutdown was what the
    /// group asked for.
    ///
    /// If the group is shut down elsewhere (`EventLoopGroup.syncShutdownGracefully()`), ``run()``
    /// returns once its threads have exited, without draining; a `ServiceGroup` then ends as for a
    /// service that finished (by default it cancels the other services).
    ///
    /// A service runs once: its loops do not start again.
    public final class EventLoopGroupService: Service, Sendable, CustomStringConvertible {
        /// The group this service runs and shuts down.
        public let group: EventLoopGroup
        private let runner: LoopServiceRunner

        /// Makes a service of `group`.
        ///
        /// - Parameters:
        ///   - group: The loops. Shut them down through the service (its graceful shutdown or
        ///     cancellation), not directly, so that the servers on them drain first.
        ///   - gracePeriod: How long a graceful shutdown waits for listeners' connections to flush
        ///     and for the hooks' promises, before the loops shut down anyway. Not negative.
        public init(group: EventLoopGroup, gracePeriod: Duration = .seconds(10)) {
            self.group = group
            runner = LoopServiceRunner(gracePeriod: gracePeriod)
        }

        /// How long a graceful shutdown waits for the drain before the loops shut down anyway.
        public var gracePeriod: Duration { runner.gracePeriod }

        /// Stops `listener` accepting at graceful shutdown and lets the connections it accepted
        /// flush their queued output (`TCPListener.shutdownGracefully(within:)`), within the grace
        /// period.
        ///
        /// Safe from any thread, before or during ``run()``. Listeners are drained before the
        /// hooks of ``onGracefulShutdown(_:)`` are called.
        ///
        /// - Returns: `true` if the listener will be drained; `false` if the graceful shutdown had
        ///   already begun (or the service was cancelled or finished): the listener is then closed
        ///   at once with `TCPListener.close()`.
        @discardableResult
        public func addListener(_ listener: TCPListener) -> Bool {
            runner.add(listener: listener)
        }

        /// Registers work to finish at graceful shutdown: `hook` is called once the listeners have
        /// stopped accepting, and the loops shut down only after its promise resolves (with any
        /// result) or the grace period is over.
        ///
        /// `hook` runs on the task that runs ``run()`` (a Swift Concurrency thread, never one of
        /// the group's loops), outside every lock, once, with the grace period. It should start
        /// finishing in-flight work (stop taking requests, let the replies produced so far go out)
        /// and return a promise that resolves when that is done. If the grace period ends, or the
        /// service is cancelled, while the promise is pending, the service calls
        /// `requestCancel()` on it (its `onRequestCancel` handlers run: a place to give up, say
        /// by closing connections at once) and shuts the loops down without waiting further.
        ///
        /// Safe from any thread, before or during ``run()``.
        ///
        /// - Parameter hook: Starts the drain; receives ``gracePeriod``.
        /// - Returns: `true` if `hook` will be called; `false` if the graceful shutdown had already
        ///   begun (or the service was cancelled or finished): `hook` is then never called.
        @discardableResult
        @preconcurrency
        public func onGracefulShutdown<Failure: Sendable>(
            _ hook: @escaping @Sendable (_ gracePeriod: Duration) -> Promise<Void, Failure>
        ) -> Bool {
            runner.add(hook: GracefulShutdownHook(hook))
        }

        /// Supervises the group until a graceful shutdown or cancellation, then drains and shuts
        /// the loops down (see the type's documentation); returns once every thread of the group
        /// has exited.
        ///
        /// - Throws: ``EventLoopServiceError/alreadyRunning`` while another call runs,
        ///   ``EventLoopServiceError/alreadyFinished`` after one has returned. Nothing else: a
        ///   cancelled task returns normally, its loops shut down.
        public func run() async throws {
            let group = group
            let runner = runner
            try await runner.run(
                startWatching: {
                    group.notifyWhenThreadsExit(queue: .global()) { runner.loopsShutDown() }
                },
                shutDownLoops: {
                    let exited = OneShotGate<Void>()
                    group.shutdownGracefully(queue: .global()) { exited.settle(()) }
                    await exited.wait()
                })
        }

        /// The service's name in `ServiceGroup`'s log messages.
        public var description: String {
            "EventLoopGroupService(loops: \(group.loops.count))"
        }
    }
#endif
