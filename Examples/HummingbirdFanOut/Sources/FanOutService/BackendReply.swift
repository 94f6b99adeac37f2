/// What a backend answers for one item.
public struct BackendReply: Sendable, Codable, Equatable {
    /// The backend that answered (`"inventory"`, `"pricing"`).
    public var backend: String
    /// The item asked about.
    public var item: String
    /// The backend's answer, e.g. `"12 in stock"` or `"4.20 EUR"`.
    public var answer: String
    /// True when the backend's timer fired on the NIO event loop of the request that called it:
    /// the promise context `.nio(loop)` keeps the whole fan-out on that one loop.
    public var servedOnRequestLoop: Bool

    /// Makes a reply.
    public init(backend: String, item: String, answer: String, servedOnRequestLoop: Bool) {
        self.backend = backend
        self.item = item
        self.answer = answer
        self.servedOnRequestLoop = servedOnRequestLoop
    }
}
