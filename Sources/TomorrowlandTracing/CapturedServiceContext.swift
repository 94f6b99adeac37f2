#if Tracing
    import ServiceContextModule
    internal import Tomorrowland

    /// The `ServiceContext` current where a promise callback was registered (`nil` included),
    /// bound again while the callback runs (B10).
    final class CapturedServiceContext: CapturedCallbackContext {
        /// The context to bind; `nil` binds "no context", so that a callback registered outside
        /// any request does not see the context of the code that resolved its promise.
        let context: ServiceContext?

        private init(_ context: ServiceContext?) {
            self.context = context
        }

        /// Shared by every registration made without a context: no allocation for them.
        private static let none = CapturedServiceContext(nil)

        /// The context current on this task or thread.
        @Sendable
        static func current() -> any CapturedCallbackContext {
            guard let context = ServiceContext.current else { return none }
            return CapturedServiceContext(context)
        }

        func withRestored<R>(_ body: () throws -> R) rethrows -> R {
            // Nothing to bind when "no context" is already what is current: the common case of a
            // callback registered outside any request and run on a loop.
            if context == nil, ServiceContext.current == nil { return try body() }
            return try ServiceContext.$current.withValue(context, operation: body)
        }
    }
#endif
