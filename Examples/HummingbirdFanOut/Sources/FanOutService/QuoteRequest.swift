/// What one `GET /quote` asks for: the item, each backend's simulated latency and outcome, and
/// the fan-out's deadline.
public struct QuoteRequest: Sendable, Equatable {
    /// The item to quote.
    public var item: String
    /// How long the inventory backend takes.
    public var inventoryLatency: Duration
    /// How long the pricing backend takes.
    public var pricingLatency: Duration
    /// How long the fan-out may take before it answers 504 and cancels what is still running.
    public var timeout: Duration
    /// The backend (by name) that answers with an error, if any.
    public var failingBackend: String?

    /// Makes a request; the defaults are those of a `GET /quote` without parameters.
    public init(
        item: String = "widget",
        inventoryLatency: Duration = .milliseconds(150),
        pricingLatency: Duration = .milliseconds(300),
        timeout: Duration = .seconds(1),
        failingBackend: String? = nil
    ) {
        self.item = item
        self.inventoryLatency = inventoryLatency
        self.pricingLatency = pricingLatency
        self.timeout = timeout
        self.failingBackend = failingBackend
    }
}
