import FanOutService
import Foundation
import NIOCore
import NIOPosix
import Prometheus
import Testing
import Tomorrowland
import TomorrowlandMetrics

/// `GET /metrics` over loopback with curl: the Prometheus text after known requests, each
/// counter's exact value; the pending-promise gauges only while the report is on; the figures of
/// the server's own NIO loops.
@Suite struct MetricsEndpointTests {
    /// Each sample line of a Prometheus text exposition (`name{labels} value`), its value by
    /// its series (`name{labels}`); comment lines (`# TYPE`, `# HELP`) left out.
    static func samples(_ text: String) -> [String: String] {
        var samples: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }

    @Test func theCountersCountTheKnownRequestsExactly() async throws {
        try await RunningFanOutServer.with { server in
            // Before any request: every series is there, at zero.
            let before = try await Curl.get(server.url("/metrics"))
            #expect(before.status == 200)
            #expect(before.body.contains("# TYPE fanout_quotes_total counter"), "\(before.body)")
            #expect(Self.samples(before.body)[#"fanout_quotes_total{outcome="quoted"}"#] == "0")
            #expect(
                Self.samples(before.body)[#"fanout_backend_events_total{backend="pricing",event="started"}"#] == "0")

            // A quote; a deadline that passes (pricing cancelled); a failing pricing backend
            // (inventory cancelled); a parameter that cannot be read (no backend called).
            #expect(
                try await Curl.get(server.url("/quote?inventory_ms=10&pricing_ms=20&timeout_ms=20000")).status == 200)
            #expect(
                try await Curl.get(server.url("/quote?inventory_ms=0&pricing_ms=60000&timeout_ms=500")).status == 504)
            #expect(await server.waitUntil("pricing", .cancelled))
            #expect(
                try await Curl.get(server.url("/quote?inventory_ms=60000&pricing_ms=10&fail=pricing&timeout_ms=30000"))
                    .status == 502)
            #expect(await server.waitUntil("inventory", .cancelled))
            #expect(try await Curl.get(server.url("/quote?timeout_ms=soon")).status == 400)

            let response = try await Curl.get(server.url("/metrics"))
            #expect(response.status == 200)
            let samples = Self.samples(response.body)
            let expected: [String: String] = [
                #"fanout_quotes_total{outcome="quoted"}"#: "1",
                #"fanout_quotes_total{outcome="timed_out"}"#: "1",
                #"fanout_quotes_total{outcome="backend_failed"}"#: "1",
                #"fanout_quotes_total{outcome="client_closed"}"#: "0",
                #"fanout_quotes_total{outcome="bad_request"}"#: "1",
                #"fanout_backend_events_total{backend="inventory",event="started"}"#: "3",
                #"fanout_backend_events_total{backend="inventory",event="completed"}"#: "2",
                #"fanout_backend_events_total{backend="inventory",event="failed"}"#: "0",
                #"fanout_backend_events_total{backend="inventory",event="cancelled"}"#: "1",
                #"fanout_backend_events_total{backend="pricing",event="started"}"#: "3",
                #"fanout_backend_events_total{backend="pricing",event="completed"}"#: "1",
                #"fanout_backend_events_total{backend="pricing",event="failed"}"#: "1",
                #"fanout_backend_events_total{backend="pricing",event="cancelled"}"#: "1",
            ]
            for (series, value) in expected {
                #expect(samples[series] == value, "\(series)")
            }
            // Nothing else: the report is off, so no pending-promise gauge, and nothing
            // bootstrapped `MetricsSystem` in this process, so no Hummingbird request metrics.
            #expect(samples.count == expected.count, "\(response.body)")
            #expect(!response.body.contains("tomorrowland_pending_promises"))
        }
    }

    @Test func withThePendingPromiseReportOnTheGaugesCountAHangingQuotesPromises() async throws {
        // A process of its own: the tracking is process-wide, and the promises of the other
        // tests' servers would be counted too.
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            PendingPromiseTracking.start()
            try await RunningFanOutServer.with { server in
                let idle = MetricsEndpointTests.samples(try await Curl.get(server.url("/metrics")).body)
                print("idle \(idle["tomorrowland_pending_promises"] ?? "none")")
                print("idle-age \(idle["tomorrowland_oldest_pending_promise_age_seconds"] ?? "none")")
                let client = try Curl.startGet(
                    server.url("/quote?item=sofa&inventory_ms=60000&pricing_ms=60000&timeout_ms=120000"))
                guard await server.waitUntil("inventory", .started), await server.waitUntil("pricing", .started)
                else { return }
                let hanging = MetricsEndpointTests.samples(try await Curl.get(server.url("/metrics")).body)
                print("hanging \(hanging["tomorrowland_pending_promises"] ?? "none")")
                let report = PendingPromiseTracking.report()
                print("report \(report.promises.count)")
                for promise in report.promises { print("site \(promise.type) \(promise.site)") }
                let age = hanging["tomorrowland_oldest_pending_promise_age_seconds"].flatMap(Double.init) ?? -1
                print("hanging-age-positive \(age > 0)")
                await client.hangUp()
                guard await server.waitUntil("inventory", .cancelled), await server.waitUntil("pricing", .cancelled)
                else { return }
                let after = MetricsEndpointTests.samples(try await Curl.get(server.url("/metrics")).body)
                print("after \(after["tomorrowland_pending_promises"] ?? "none")")
            }
        }
        let lines = String(decoding: try #require(result).standardOutputContent, as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(lines.contains("idle 0.0"))
        #expect(lines.contains("idle-age 0.0"))
        #expect(lines.contains("hanging-age-positive true"))
        // The hanging quote's root promises are its two backend calls (`Promise(on:_:)` in
        // `SimulatedBackend.call`); the rest of its chain (each call's timer, `when`, the
        // timeout, the map) are promises the tracking does not record as roots. The report,
        // taken after the scrape, lists the same two.
        #expect(lines.contains("hanging 2.0"))
        #expect(lines.contains("report 2"))
        let sites = lines.filter { $0.hasPrefix("site ") }
        #expect(sites.count == 2)
        #expect(
            sites.allSatisfy {
                $0.hasPrefix("site Promise<BackendReply, BackendError> FanOutService/SimulatedBackend.swift:")
            })
        // Cancelled by the hang-up, they are pending no more.
        #expect(lines.contains("after 0.0"))
    }

    @Test func theServersLoopsReportTheirTicksAndTheTimersOfAHangingQuote() async throws {
        // As the program does: the server on a group of its own whose metrics delegate reports
        // each loop's figures to the registry `GET /metrics` exports. One loop, so that every
        // connection and every promise of the test runs on it.
        let registry = PrometheusCollectorRegistry()
        let loopMetrics = NIOLoopMetricsDelegate(factory: PrometheusMetricsFactory(registry: registry))
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1, metricsDelegate: loopMetrics)
        try await RunningFanOutServer.with(metricsRegistry: registry, eventLoopGroup: loops) { server in
            #expect(try await Curl.get(server.url("/quote?inventory_ms=1&pricing_ms=1&timeout_ms=20000")).status == 200)
            let name = try #require(loopMetrics.loopNames.first)
            #expect(loopMetrics.loopNames == [name])
            let loop = #"{loop="\#(name)"}"#
            let idle = Self.samples(try await Curl.get(server.url("/metrics")).body)
            // The loop ticked (the quote's and the scrape's connections): its tick and wait
            // timers, its items per tick, its timers gauge and its stall counter are exported.
            #expect(Int(idle["tomorrowland_nio_loop_tick_duration_count\(loop)"] ?? "") ?? 0 > 0, "\(idle)")
            #expect(Int(idle["tomorrowland_nio_loop_wait_duration_count\(loop)"] ?? "") ?? 0 > 0)
            #expect(Double(idle["tomorrowland_nio_loop_tick_items_sum\(loop)"] ?? "") ?? 0 > 0)
            #expect(idle["tomorrowland_nio_loop_stalls\(loop)"] == "0")

            // A quote whose backends hang: its two backend calls and its timeout are three timers
            // of the loop's executor, until the client hangs up and the quote is cancelled. The
            // gauge is set when a tick ends, and the scrape's own request ends one.
            let client = try Curl.startGet(
                server.url("/quote?item=sofa&inventory_ms=60000&pricing_ms=60000&timeout_ms=120000"))
            guard await server.waitUntil("inventory", .started), await server.waitUntil("pricing", .started) else {
                Issue.record("the backends did not start")
                return
            }
            #expect(await Self.scrape(server, until: "tomorrowland_nio_loop_armed_timers\(loop)", is: 3))
            await client.hangUp()
            #expect(await server.waitUntil("inventory", .cancelled))
            #expect(await server.waitUntil("pricing", .cancelled))
            #expect(await Self.scrape(server, until: "tomorrowland_nio_loop_armed_timers\(loop)", is: 0))
        }
        try await loops.shutdownGracefully()
    }

    /// Scrapes `GET /metrics` until `series` has `value`, for at most 20 s (a bound, not a
    /// synchronisation: the gauge is set at the end of the loop tick after the change, and each
    /// scrape makes the loop tick).
    private static func scrape(_ server: RunningFanOutServer, until series: String, is value: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let body = try? await Curl.get(server.url("/metrics")).body,
                samples(body)[series].flatMap(Double.init) == value
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
