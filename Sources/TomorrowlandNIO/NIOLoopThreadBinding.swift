#if NIO
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The calling thread's record of the ``NIOLoopLocalQueue`` whose thread-bound drain chain is
    /// active on it (a pthread key): what lets that chain's NIO tasks capture nothing.
    ///
    /// The record is an unretained pointer; the queue keeps itself alive while it is recorded
    /// (see `NIOLoopLocalQueue`'s "Thread-bound drains"), and only that queue, on its loop's
    /// thread, writes it.
    /// NIOInvariants: "Drain owner references".
    enum NIOLoopThreadBinding {
        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key, nil)
            precondition(status == 0, "pthread_key_create failed (\(status))")
            return key
        }()

        /// The recorded queue, `nil` when none.
        static var current: UnsafeMutableRawPointer? {
            get { pthread_getspecific(key) }
            set { pthread_setspecific(key, newValue) }
        }
    }
#endif
