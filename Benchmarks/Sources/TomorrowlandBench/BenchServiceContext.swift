import Foundation
import ServiceContextModule
import TomorrowlandTracing

/// What `TOMORROWLAND_BENCH_SERVICE_CONTEXT` asks of a run, to measure what context propagation
/// costs (Benchmarks/README.md): unset or `off`, nothing (every gated figure); `on`, propagation on
/// with no context current (each registration captures "none"); `request`, propagation on and
/// every workload body run inside a request's context (each registration captures it, each
/// callback binds it).
enum BenchServiceContext {
    enum Mode: String {
        case off, on, request
    }

    static let mode: Mode = {
        guard let value = ProcessInfo.processInfo.environment["TOMORROWLAND_BENCH_SERVICE_CONTEXT"] else {
            return .off
        }
        guard let mode = Mode(rawValue: value) else {
            usageError("TOMORROWLAND_BENCH_SERVICE_CONTEXT takes off, on or request, not \(value)")
        }
        return mode
    }()

    /// The context `request` runs the workloads in.
    private static let requestContext: ServiceContext = {
        var context = ServiceContext.topLevel
        context[BenchRequestKey.self] = "bench-request"
        return context
    }()

    /// Turns propagation on unless the mode is `off`; before any workload is made.
    static func startIfAsked() {
        if mode != .off { ServiceContextPropagation.start() }
    }

    /// Runs `body`, inside the request's context in mode `request`.
    static func run(_ body: () -> Void) {
        if mode == .request {
            ServiceContext.withValue(requestContext, operation: body)
        } else {
            body()
        }
    }
}

/// The key of the request id in ``BenchServiceContext``'s context.
private enum BenchRequestKey: ServiceContextKey {
    typealias Value = String
}
