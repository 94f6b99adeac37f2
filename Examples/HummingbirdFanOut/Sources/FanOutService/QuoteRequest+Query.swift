import Hummingbird

extension QuoteRequest {
    /// Reads a request from `GET /quote`'s query: `item`, `inventory_ms`, `pricing_ms`,
    /// `timeout_ms` (whole milliseconds, 0 to 600,000) and `fail` (`inventory` or `pricing`);
    /// each one left out keeps its default.
    ///
    /// - Throws: `HTTPError(.badRequest)` naming the parameter that is not a valid value.
    public init(query: Parameters) throws {
        self.init()
        if let item = query.get("item") {
            self.item = item
        }
        inventoryLatency = try Self.milliseconds(query, "inventory_ms") ?? inventoryLatency
        pricingLatency = try Self.milliseconds(query, "pricing_ms") ?? pricingLatency
        timeout = try Self.milliseconds(query, "timeout_ms") ?? timeout
        if let backend = query.get("fail") {
            guard ["inventory", "pricing"].contains(backend) else {
                throw HTTPError(.badRequest, message: "fail: expected inventory or pricing, got \(backend)")
            }
            failingBackend = backend
        }
    }

    private static func milliseconds(_ query: Parameters, _ name: String) throws -> Duration? {
        guard let text = query.get(name) else { return nil }
        guard let value = Int(text), (0...600_000).contains(value) else {
            throw HTTPError(.badRequest, message: "\(name): expected whole milliseconds (0 to 600000), got \(text)")
        }
        return .milliseconds(value)
    }
}
