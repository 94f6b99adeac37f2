/// The fan-out's answer: both backends' replies for one item.
public struct Quote: Sendable, Codable, Equatable {
    /// The item.
    public var item: String
    /// The inventory backend's reply.
    public var inventory: BackendReply
    /// The pricing backend's reply.
    public var pricing: BackendReply

    /// Makes a quote.
    public init(item: String, inventory: BackendReply, pricing: BackendReply) {
        self.item = item
        self.inventory = inventory
        self.pricing = pricing
    }
}
