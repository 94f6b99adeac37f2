#if NIO
    import NIOCore
    import NIOPosix
    internal import TomorrowlandScheduling

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The calling thread's record of the `LoopMonitor` of the NIO loop that runs on it, so
    /// that ``NIOLoopTickStatistics`` finds it at each tick without a lock (a pthread key).
    ///
    /// A `MultiThreadedEventLoopGroup`'s loop keeps its thread for its whole life, so the record
    /// made at a loop's first tick holds for every later one; a thread that later runs another
    /// loop (`withCurrentThreadAsEventLoop`) gets a new record, as the loop's identity differs.
    /// The record holds its monitor strongly, and is released with the thread (the key's
    /// destructor) or when replaced.
    enum NIOLoopMonitorBinding {
        private final class Record {
            let eventLoopID: ObjectIdentifier
            let monitor: LoopMonitor

            init(eventLoopID: ObjectIdentifier, monitor: LoopMonitor) {
                self.eventLoopID = eventLoopID
                self.monitor = monitor
            }
        }

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key) { record in
                if let record { Unmanaged<AnyObject>.fromOpaque(record).release() }
            }
            precondition(status == 0, "pthread_key_create failed (\(status))")
            return key
        }()

        /// The monitor of the loop `eventLoopID`, which runs on the calling thread; recorded, and
        /// its tick counting started, at the first call on this thread. Nil if the calling thread
        /// is not that loop's (not a `MultiThreadedEventLoopGroup`'s loop).
        static func monitor(forLoop eventLoopID: ObjectIdentifier) -> LoopMonitor? {
            if let recorded = pthread_getspecific(key) {
                let found = Unmanaged<Record>.fromOpaque(recorded)._withUnsafeGuaranteedRef { record in
                    record.eventLoopID == eventLoopID ? record.monitor : nil
                }
                if let found { return found }
            }
            return record(eventLoopID)
        }

        /// The first tick of a loop on this thread: finds its executor and records its monitor.
        @inline(never)
        private static func record(_ eventLoopID: ObjectIdentifier) -> LoopMonitor? {
            guard let eventLoop = MultiThreadedEventLoopGroup.currentEventLoop,
                ObjectIdentifier(eventLoop) == eventLoopID
            else { return nil }
            let monitor = NIOEventLoopExecutor.shared(for: eventLoop).monitor
            monitor.startCountingReportedTicks()
            let replaced = pthread_getspecific(key)
            let record = Record(eventLoopID: eventLoopID, monitor: monitor)
            pthread_setspecific(key, Unmanaged.passRetained(record).toOpaque())
            if let replaced { Unmanaged<Record>.fromOpaque(replaced).release() }
            return monitor
        }
    }
#endif
