#if ServiceLifecycle
    import TomorrowlandLoop

    /// The lifecycle of a loop service, as a pure state machine: each call moves the phase on and
    /// says what the caller (``LoopServiceRunner``) must do; nothing here runs user code.
    ///
    /// `idle` (registrations collect) → `running` (`run()` waits for a trigger) → `draining`
    /// (listeners and hooks started, waiting for them within the grace period) → `shuttingDown`
    /// (the loops shut down) → `finished`. A trigger other than graceful shutdown (task
    /// cancellation, the loops shut down elsewhere) skips `draining`.
    struct LoopServiceStateMachine {
        enum Phase: Equatable {
            case idle
            case running
            case draining
            case shuttingDown
            case finished
        }

        private(set) var phase: Phase = .idle
        private var listeners: [TCPListener] = []
        private var hooks: [GracefulShutdownHook] = []

        /// `run()` begins: nil to go on, or why it must not.
        mutating func start() -> EventLoopServiceError? {
            switch phase {
            case .idle:
                phase = .running
                return nil
            case .running, .draining, .shuttingDown:
                return .alreadyRunning
            case .finished:
                return .alreadyFinished
            }
        }

        /// Keeps `listener` for the drain; false once the drain has begun (the caller closes it).
        mutating func register(listener: TCPListener) -> Bool {
            guard phase == .idle || phase == .running else { return false }
            listeners.append(listener)
            return true
        }

        /// Keeps `hook` for the drain; false once the drain has begun (it is not called).
        mutating func register(hook: GracefulShutdownHook) -> Bool {
            guard phase == .idle || phase == .running else { return false }
            hooks.append(hook)
            return true
        }

        /// Graceful shutdown: hands over what to drain, listeners first (registration order).
        mutating func beginDrain() -> (listeners: [TCPListener], hooks: [GracefulShutdownHook]) {
            precondition(phase == .running, "LoopServiceStateMachine: drain begins while running only")
            phase = .draining
            defer {
                listeners = []
                hooks = []
            }
            return (listeners, hooks)
        }

        /// The loops shut down now; registrations end (dropped without being called).
        mutating func beginShutdown() {
            precondition(phase == .running || phase == .draining, "LoopServiceStateMachine: shutdown begins once")
            phase = .shuttingDown
            listeners = []
            hooks = []
        }

        /// The loops have shut down and their threads exited.
        mutating func finish() {
            precondition(phase == .shuttingDown, "LoopServiceStateMachine: finishes after shutting down")
            phase = .finished
        }
    }
#endif
