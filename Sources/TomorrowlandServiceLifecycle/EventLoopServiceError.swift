#if ServiceLifecycle
    /// Why a loop service's `run()` refused to run.
    ///
    /// A loop service runs once: its `run()` ends with its loops shut down, and loops do not start
    /// again.
    public enum EventLoopServiceError: Error, Sendable, Equatable, CustomStringConvertible {
        /// `run()` was called while another call to it was still running.
        case alreadyRunning
        /// `run()` was called after an earlier call had finished (the loops are shut down).
        case alreadyFinished

        /// A sentence that says what happened and what to do instead.
        public var description: String {
            switch self {
            case .alreadyRunning:
                "the loop service is already running: add it to one ServiceGroup, once"
            case .alreadyFinished:
                "the loop service has already run and shut its loops down: make a new service with new loops"
            }
        }
    }
#endif
