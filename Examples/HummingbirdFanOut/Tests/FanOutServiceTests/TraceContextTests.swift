import FanOutService
import Foundation
import InMemoryTracing
import Logging
import Testing
import TomorrowlandTracing
import Tracing

/// The request's trace follows its promise callbacks onto the NIO loop: the backends' log lines,
/// written in a `Promise(on: .nio(loop))` handler and in callbacks a NIO timer fires, carry the
/// trace id of the request that started them, even with two requests in flight on the loops.
@Suite(.serialized) struct TraceContextTests {
    /// The process's tracer: `InstrumentationSystem` takes one bootstrap per process.
    static let tracer: InMemoryTracer = {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()

    /// The trace id of the current ServiceContext, as the service's log metadata.
    static let traceMetadata = Logger.MetadataProvider {
        guard let span = ServiceContext.current?.inMemorySpanContext else { return [:] }
        return ["trace_id": .string(span.traceID)]
    }

    @Test func backendLogLinesWrittenInPromiseCallbacksCarryTheirRequestsTraceID() async throws {
        _ = Self.tracer
        ServiceContextPropagation.start()
        defer { ServiceContextPropagation.stop() }
        let lines = RecordingLogHandler.Lines()
        let logger = Logger(label: "TraceContextTests") { _ in
            RecordingLogHandler(lines: lines, metadataProvider: Self.traceMetadata)
        }
        try await RunningFanOutServer.with(serviceLogger: logger) { server in
            // Two requests at once, each continuing a trace of its own (the in-memory tracer's
            // propagation headers), on the service's loops.
            async let anvil = Curl.get(
                server.url("/quote?item=anvil&inventory_ms=100&pricing_ms=150&timeout_ms=20000"),
                headers: ["in-memory-trace-id: trace-anvil", "in-memory-span-id: client-anvil"])
            async let kettle = Curl.get(
                server.url("/quote?item=kettle&inventory_ms=150&pricing_ms=100&timeout_ms=20000"),
                headers: ["in-memory-trace-id: trace-kettle", "in-memory-span-id: client-kettle"])
            let (anvilResponse, kettleResponse) = try await (anvil, kettle)
            #expect(anvilResponse.status == 200)
            #expect(kettleResponse.status == 200)
        }
        // Each call logs `started` (the Promise(on:) handler, on the loop) and `completed` (a
        // callback the backend's NIO timer fires): 4 lines per request.
        for (item, trace) in [("anvil", "trace-anvil"), ("kettle", "trace-kettle")] {
            let itemLines = lines.all.filter { $0.message.contains("(\(item))") }
            #expect(itemLines.count == 4, "\(lines.all.map(\.message))")
            for line in itemLines {
                #expect(line.metadata["trace_id"] == .string(trace), "\(line.message): \(line.metadata)")
            }
        }
    }
}
