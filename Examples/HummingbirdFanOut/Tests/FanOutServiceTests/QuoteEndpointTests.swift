import FanOutService
import Foundation
import Testing

/// `GET /quote` over loopback with curl: the fan-out with `when`, the `timeout`, a failing
/// backend, and a client that hangs up, each seen from the client and from the backends' log.
@Suite struct QuoteEndpointTests {
    @Test func bothBackendsAnsweringInTimeGiveTheCombinedQuoteFromTheRequestsLoop() async throws {
        try await RunningFanOutServer.with { server in
            let response = try await Curl.get(
                server.url("/quote?item=anvil&inventory_ms=100&pricing_ms=150&timeout_ms=20000"))
            #expect(response.status == 200)
            let quote = try JSONDecoder().decode(Quote.self, from: Data(response.body.utf8))
            #expect(quote.item == "anvil")
            #expect(
                quote.inventory
                    == BackendReply(
                        backend: "inventory", item: "anvil", answer: "12 in stock", servedOnRequestLoop: true))
            #expect(
                quote.pricing
                    == BackendReply(backend: "pricing", item: "anvil", answer: "4.20 EUR", servedOnRequestLoop: true))
            // Fan-out, not a sequence: both calls started before either answered.
            #expect(
                server.fanOut.log.events.map(\.kind).prefix(2) == [.started, .started],
                "\(server.fanOut.log.events)")
            #expect(server.fanOut.log.count(backend: "inventory", kind: .completed) == 1)
            #expect(server.fanOut.log.count(backend: "pricing", kind: .completed) == 1)
            #expect(server.fanOut.log.count(backend: "inventory", kind: .cancelled) == 0)
            #expect(server.fanOut.log.count(backend: "pricing", kind: .cancelled) == 0)
        }
    }

    @Test func aBackendSlowerThanTheTimeoutGives504AndItsCallIsCancelled() async throws {
        try await RunningFanOutServer.with { server in
            let response = try await Curl.get(
                server.url("/quote?item=kettle&inventory_ms=0&pricing_ms=60000&timeout_ms=1000"))
            #expect(response.status == 504)
            // The timeout passed its cancel request up through `when` to the call still running.
            #expect(await server.waitUntil("pricing", .cancelled))
            #expect(server.fanOut.log.count(backend: "inventory", kind: .completed) == 1)
            #expect(server.fanOut.log.count(backend: "inventory", kind: .cancelled) == 0)
            #expect(server.fanOut.log.count(backend: "pricing", kind: .completed) == 0)
        }
    }

    @Test func aFailingBackendGives502AndCancelsTheOtherCall() async throws {
        try await RunningFanOutServer.with { server in
            let response = try await Curl.get(
                server.url("/quote?item=lamp&inventory_ms=60000&pricing_ms=10&fail=pricing&timeout_ms=30000"))
            #expect(response.status == 502)
            #expect(response.body.contains("backend pricing failed"), "\(response.body)")
            // `when(fulfilled:cancelOnFailure: true)`: the first failure cancels every input.
            #expect(await server.waitUntil("inventory", .cancelled))
            #expect(server.fanOut.log.count(backend: "pricing", kind: .failed) == 1)
            #expect(server.fanOut.log.count(backend: "inventory", kind: .completed) == 0)
        }
    }

    @Test func aClientThatHangsUpCancelsBothBackendCalls() async throws {
        try await RunningFanOutServer.with { server in
            // Both backends would take a minute, the deadline is later still: only the hang-up
            // can end these calls within the test's bounds.
            let client = try Curl.startGet(
                server.url("/quote?item=sofa&inventory_ms=60000&pricing_ms=60000&timeout_ms=120000"))
            #expect(await server.waitUntil("inventory", .started))
            #expect(await server.waitUntil("pricing", .started))
            await client.hangUp()
            // Hummingbird's inbound-close hook → quote.requestCancel() → timeout → when → each
            // call's onRequestCancel handler, on the request's loop.
            #expect(await server.waitUntil("inventory", .cancelled))
            #expect(await server.waitUntil("pricing", .cancelled))
            #expect(server.fanOut.log.count(backend: "inventory", kind: .completed) == 0)
            #expect(server.fanOut.log.count(backend: "pricing", kind: .completed) == 0)
            // And the service says so to the next client.
            let stats = try await Curl.get(server.url("/stats"))
            #expect(stats.status == 200)
            let counts = try JSONDecoder().decode(BackendStats.self, from: Data(stats.body.utf8))
            #expect(counts.backends["inventory"]?["cancelled"] == 1)
            #expect(counts.backends["pricing"]?["cancelled"] == 1)
            #expect(counts.backends["pricing"]?["started"] == 1)
        }
    }

    @Test func anInvalidParameterGives400WithoutCallingTheBackends() async throws {
        try await RunningFanOutServer.with { server in
            let response = try await Curl.get(server.url("/quote?timeout_ms=soon"))
            #expect(response.status == 400)
            #expect(response.body.contains("timeout_ms"), "\(response.body)")
            #expect(server.fanOut.log.events.isEmpty)
        }
    }
}
