#if ServiceLifecycle
    import Foundation
    import ServiceLifecycle
    import Tomorrowland
    import TomorrowlandLoop

    #if canImport(Glibc)
        import Glibc
    #endif

    /// One `EventLoop` as a swift-service-lifecycle `Service`, driven by a thread the service
    /// starts: ``run()`` starts the thread, and ends, after a graceful shutdown or cancellation,
    /// with the loop shut down and the thread exited.
    ///
    /// ```swift
    /// let service = EventLoopService(gracePeriod: .seconds(5))
    /// let loop = service.loop
    /// service.onGracefulShutdown { _ in
    ///     scheduler.stop()  // stop starting work, finish what runs
    ///     return scheduler.finished
    /// }
    /// let serviceGroup = ServiceGroup(
    ///     services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    /// try await serviceGroup.run()
    /// ```
    ///
    /// Work may be given to the loop before ``run()`` (submitted work waits for the thread;
    /// `TCPListener.listen` binds at once on the calling thread while no thread drives the loop).
    /// The thread drives the loop until it shuts down: `EventLoop.stop()` only makes it drive the
    /// loop again. Do not drive the loop yourself meanwhile (`run()`, `runUntilIdle()`), and do not
    /// give the service a loop that borrows a host's `event_base`: the host drives that one.
    ///
    /// Graceful shutdown, cancellation, a shutdown requested elsewhere (`EventLoop.shutdown()`),
    /// the ``gracePeriod``, the order (listeners stop accepting, hooks finish in-flight work, the
    /// loop shuts down with `EventLoop.shutdown()`'s outcomes) and the errors of ``run()`` are
    /// those of ``EventLoopGroupService``, for this one loop.
    public final class EventLoopService: Service, Sendable, CustomStringConvertible {
        /// The loop this service drives and shuts down.
        public let loop: EventLoop
        private let threadName: String
        private let runner: LoopServiceRunner
        /// Settled by the service's thread as it exits, the loop shut down.
        private let threadExited = OneShotGate<Void>()

        /// Makes a service that drives `loop` on a thread of its own.
        ///
        /// - Parameters:
        ///   - loop: The loop; a new one by default.
        ///   - gracePeriod: How long a graceful shutdown waits for listeners' connections to flush
        ///     and for the hooks' promises, before the loop shuts down anyway. Not negative.
        ///   - threadName: The name of the thread that drives the loop (seen in debuggers and
        ///     `top -H`). Linux keeps 15 bytes of a thread's name: a longer one is cut to its first
        ///     15 bytes (whole characters).
        public init(
            loop: EventLoop = EventLoop(), gracePeriod: Duration = .seconds(10),
            threadName: String = "LoopService"
        ) {
            self.loop = loop
            self.threadName = Self.fittingThreadName(threadName)
            runner = LoopServiceRunner(gracePeriod: gracePeriod)
        }

        /// How long a graceful shutdown waits for the drain before the loop shuts down anyway.
        public var gracePeriod: Duration { runner.gracePeriod }

        /// Stops `listener` accepting at graceful shutdown and lets its connections flush, within
        /// the grace period; see ``EventLoopGroupService/addListener(_:)``.
        ///
        /// - Returns: `true` if the listener will be drained; `false` if the graceful shutdown had
        ///   already begun: the listener is then closed at once.
        @discardableResult
        public func addListener(_ listener: TCPListener) -> Bool {
            runner.add(listener: listener)
        }

        /// Registers work to finish at graceful shutdown; see
        /// ``EventLoopGroupService/onGracefulShutdown(_:)``.
        ///
        /// `hook` runs on the task that runs ``run()`` (a Swift Concurrency thread, not the loop's),
        /// outside every lock, once, with the grace period.
        ///
        /// - Returns: `true` if `hook` will be called; `false` if the graceful shutdown had already
        ///   begun: `hook` is then never called.
        @discardableResult
        @preconcurrency
        public func onGracefulShutdown<Failure: Sendable>(
            _ hook: @escaping @Sendable (_ gracePeriod: Duration) -> Promise<Void, Failure>
        ) -> Bool {
            runner.add(hook: GracefulShutdownHook(hook))
        }

        /// Starts the thread that drives the loop, waits for a graceful shutdown or cancellation,
        /// then drains and shuts the loop down; returns once the thread has exited.
        ///
        /// - Throws: ``EventLoopServiceError/alreadyRunning`` while another call runs,
        ///   ``EventLoopServiceError/alreadyFinished`` after one has returned. Nothing else: a
        ///   cancelled task returns normally, its loop shut down.
        public func run() async throws {
            let loop = loop
            let runner = runner
            let threadExited = threadExited
            let threadName = threadName
            try await runner.run(
                startWatching: {
                    let thread = Thread {
                        Self.nameCurrentThread(threadName)
                        // `runUnlessShutDown`, not `run()`: a shutdown from the service's task may
                        // hold the idle loop at the moment this thread first claims it.
                        while loop.runUnlessShutDown() {}
                        threadExited.settle(())
                        runner.loopsShutDown()
                    }
                    thread.start()
                },
                shutDownLoops: {
                    loop.shutdown()
                    await threadExited.wait()
                })
        }

        /// `name` cut to Linux's 15 bytes on a character boundary (the kernel would cut it
        /// anywhere, even inside a character).
        static func fittingThreadName(_ name: String) -> String {
            var fitting = ""
            for character in name {
                guard fitting.utf8.count + character.utf8.count <= 15 else { break }
                fitting.append(character)
            }
            return fitting
        }

        /// Names the calling thread, through `/proc/thread-self/comm`: glibc's
        /// `pthread_setname_np` is not visible to Swift, and Foundation's `Thread.name` did not
        /// reliably reach the kernel here (the thread could keep its creator's name). A failure
        /// leaves the name as it was: it is only a label.
        static func nameCurrentThread(_ name: String) {
            let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            defer { close(fd) }
            let bytes = Array(name.utf8)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }

        /// The service's name in `ServiceGroup`'s log messages.
        public var description: String {
            "EventLoopService(\(threadName))"
        }
    }
#endif
