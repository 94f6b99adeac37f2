#if NIO
    import NIOCore
    import NIOPosix

    /// A NIO loop, held without a reference count: queues closures with `execute`, arms scheduled
    /// callbacks, reads the loop's clock, and tells whether it is the calling thread's
    /// `MultiThreadedEventLoopGroup` loop.
    ///
    /// Why: queueing a drain through an `unowned(unsafe)` existential costs a retain and a release
    /// of the loop per drain (Swift copies the reference to call through it), two atomic operations
    /// per W4@NIO link. Opened once to the loop's concrete type, the reference is used through
    /// `Unmanaged` without either.
    ///
    /// Use it only where the loop is known to be alive: on the loop's own thread.
    /// NIOInvariants: "The unretained loop" says why it is alive there.
    class NIOUnretainedLoop: @unchecked Sendable {
        /// The loop's `execute(_:)`, without retaining the loop.
        func execute(_ work: @escaping @Sendable () -> Void) {
            preconditionFailure("NIOUnretainedLoop is abstract")
        }

        /// The loop's `now` (its own clock: virtual on an `EmbeddedEventLoop`), in uptime nanoseconds.
        var now: UInt64 {
            preconditionFailure("NIOUnretainedLoop is abstract")
        }

        /// The loop's `scheduleCallback(at:handler:)`, for a deadline in uptime nanoseconds on the
        /// loop's clock; NIO's handle is not kept (the timers never cancel a callback).
        func scheduleCallback(at deadline: UInt64, handler: NIOLoopTimerCallback) throws {
            preconditionFailure("NIOUnretainedLoop is abstract")
        }

        /// Whether the loop is the one NIOPosix's `MultiThreadedEventLoopGroup` runs on the calling
        /// thread: a `SelectableEventLoop`, bound to this thread for its whole life. Costs a retain
        /// and a release of the current loop; the queue asks once.
        var isCurrentMultiThreadedEventLoop: Bool {
            preconditionFailure("NIOUnretainedLoop is abstract")
        }

        /// A holder of `eventLoop`, opened to its concrete type.
        static func make(_ eventLoop: some EventLoop) -> NIOUnretainedLoop {
            NIOTypedUnretainedLoop(eventLoop)
        }
    }

    /// ``NIOUnretainedLoop`` for a loop of type `Loop`.
    ///
    /// `@unchecked Sendable`: `loop` never changes; whether it is alive is the caller's concern.
    /// Every `_withUnsafeGuaranteedRef` below: NIOInvariants: "The unretained loop".
    private final class NIOTypedUnretainedLoop<Loop: EventLoop>: NIOUnretainedLoop, @unchecked Sendable {
        private let loop: Unmanaged<Loop>

        init(_ loop: Loop) {
            self.loop = .passUnretained(loop)
        }

        override func execute(_ work: @escaping @Sendable () -> Void) {
            loop._withUnsafeGuaranteedRef { $0.execute(work) }
        }

        override var now: UInt64 {
            loop._withUnsafeGuaranteedRef { $0.now.uptimeNanoseconds }
        }

        override func scheduleCallback(at deadline: UInt64, handler: NIOLoopTimerCallback) throws {
            try loop._withUnsafeGuaranteedRef {
                _ = try $0.scheduleCallback(at: .uptimeNanoseconds(deadline), handler: handler)
            }
        }

        override var isCurrentMultiThreadedEventLoop: Bool {
            guard let current = MultiThreadedEventLoopGroup.currentEventLoop else { return false }
            return ObjectIdentifier(current) == ObjectIdentifier(loop.takeUnretainedValue())
        }
    }
#endif
