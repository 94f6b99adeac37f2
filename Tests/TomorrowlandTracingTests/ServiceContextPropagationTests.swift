#if Tracing
    import ServiceContextModule
    import Testing
    import Tomorrowland
    import TomorrowlandTracing

    /// Every suite of this target, one at a time: they turn propagation on and off, and one of them
    /// checks what happens while it is off.
    @Suite(.serialized)
    struct ServiceContextPropagationTests {}

    /// The request a test's `ServiceContext` stands for.
    enum RequestIDKey: ServiceContextKey {
        typealias Value = String
    }

    extension ServiceContext {
        /// A context holding only `requestID`.
        static func request(_ requestID: String) -> ServiceContext {
            var context = ServiceContext.topLevel
            context[RequestIDKey.self] = requestID
            return context
        }

        /// The request id of the current context, `nil` when there is none.
        static var currentRequestID: String? {
            ServiceContext.current?[RequestIDKey.self]
        }
    }

    /// Runs `body` with propagation on, and turns it off after.
    func withPropagation<R>(_ body: () throws -> R) rethrows -> R {
        ServiceContextPropagation.start()
        defer { ServiceContextPropagation.stop() }
        return try body()
    }

    /// Runs `body` with the context of request `requestID` current.
    func inRequest<R>(_ requestID: String, _ body: () throws -> R) rethrows -> R {
        try ServiceContext.withValue(.request(requestID), operation: body)
    }
#endif
