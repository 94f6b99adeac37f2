#if NIO
    import NIOCore
    import NIOPosix

    /// A NIO loop, held without a reference count: queues closures with `execute`, and tells
    /// whether it is the calling thread's `MultiThreadedEventLoopGroup` loop.
    ///
    /// Why: queueing a drain through an `unowned(unsafe)` existential costs a retain and a release
    /// of the loop per drain (Swift copies the reference to call through it), two atomic operations
    /// per W4@NIO link. Opened once to the loop's concrete type, the reference is used through
    /// `Unmanaged` without either.
    ///
    /// Use it only where the loop is known to be alive: on the loop's own thread.
    class NIOUnretainedLoop: @unchecked Sendable {
        /// The loop's `execute(_:)`, without retaining the loop.
        func execute(_ work: @escaping @Sendable () -> Void) {
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
    private final class NIOTypedUnretainedLoop<Loop: EventLoop>: NIOUnretainedLoop, @unchecked Sendable {
        private let loop: Unmanaged<Loop>

        init(_ loop: Loop) {
            self.loop = .passUnretained(loop)
        }

        override func execute(_ work: @escaping @Sendable () -> Void) {
            loop._withUnsafeGuaranteedRef { $0.execute(work) }
        }

        override var isCurrentMultiThreadedEventLoop: Bool {
            guard let current = MultiThreadedEventLoopGroup.currentEventLoop else { return false }
            return ObjectIdentifier(current) == ObjectIdentifier(loop.takeUnretainedValue())
        }
    }
#endif
