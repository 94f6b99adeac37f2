#if Tracing
    import ServiceContextModule
    internal import Tomorrowland

    /// Carries swift-distributed-tracing's `ServiceContext` through promise callbacks: while on,
    /// the context current where a callback is registered is current while that callback runs,
    /// on whatever context and thread it runs.
    ///
    /// `ServiceContext.current` is a task-local. Without propagation it is lost the moment a
    /// callback runs on a loop or a queue (that thread runs no task of yours), and a span or a log
    /// line made in the callback no longer belongs to the request. With it, a server keeps the
    /// request's trace through `map`, `flatMap`, `recover`, `when`, `timeout`, `delay`, callbacks
    /// with tokens, `Promise(on:_:)` handlers, `onRequestCancel` handlers and retries, on
    /// Dispatch queues, `EventLoop`s, SwiftNIO loops, `TestLoop` and `.immediate`.
    ///
    /// The rule (the core's rule B10): **registration, not resolution, decides.** A callback sees the
    /// context current where it was registered (`ServiceContext.current` then, `nil` included),
    /// not the one of the code that resolved the promise, and only while it runs: work that runs
    /// after it on the same thread sees what was current there before.
    ///
    /// ```swift
    /// ServiceContextPropagation.start()   // once, at start-up
    ///
    /// // in a request handler, where a span made `ServiceContext.current` the request's
    /// fetchUser(id).flatMap(on: .loop) { user in
    ///     logger.info("loaded \(user.name)")   // the request's trace id, through a metadata provider
    ///     return fetchOrders(user)
    /// }
    /// ```
    ///
    /// Off by default. Off, a registration reads one global and takes a branch, a few
    /// instructions per callback, within the CI's instruction gates. While on, each registration
    /// reads the task-local and
    /// keeps a reference to the context, and each run binds it for the callback's duration; the
    /// costs are measured in the package's `Benchmarks/README.md`.
    ///
    /// Callbacks registered before ``start()`` keep no context. `await promise.value` needs none
    /// of this: the awaiting task keeps its own task-locals.
    public enum ServiceContextPropagation {
        /// Turns propagation on for callbacks registered from now on.
        ///
        /// Calls nest: propagation stays on until as many ``stop()`` calls, so that independent
        /// users (tests running in parallel) do not turn each other's off. A server calls it once,
        /// at start-up, before it serves.
        public static func start() {
            CallbackContextPropagation.start(capturingWith: CapturedServiceContext.current)
        }

        /// Balances one ``start()``; the last one turns propagation off. Callbacks registered
        /// while it was on keep their context.
        public static func stop() {
            CallbackContextPropagation.stop()
        }

        /// Whether callbacks registered now capture the current `ServiceContext`.
        public static var isOn: Bool {
            CallbackContextPropagation.isOn
        }
    }
#endif
