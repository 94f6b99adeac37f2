#if NIO
    import NIOCore
    import Tomorrowland

    /// SwiftNIO event loops as promise contexts.
    extension PromiseContext {
        /// The context that runs callbacks on a SwiftNIO event loop's thread:
        /// `.executor(NIOEventLoopExecutor.shared(for: eventLoop))`.
        ///
        /// Callbacks are submitted with the loop's `execute`, in order, and never run inside the
        /// call that triggers them, even on the loop's thread; timers (`timeout`, `delay`,
        /// `Promise(on:…after:)`) are the loop's scheduled callbacks. The executor is shared per
        /// loop: after the first use, this looks it up (no allocation).
        ///
        /// - Parameter eventLoop: A NIO loop: a `MultiThreadedEventLoopGroup`'s loop, a channel's
        ///   `eventLoop`, an `EmbeddedEventLoop`...
        public static func nio(_ eventLoop: any EventLoop) -> PromiseContext {
            .executor(NIOEventLoopExecutor.shared(for: eventLoop))
        }
    }
#endif
