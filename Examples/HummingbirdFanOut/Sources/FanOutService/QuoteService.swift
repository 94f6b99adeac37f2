import NIOCore
import Tomorrowland
import TomorrowlandNIO

/// The fan-out: asks the inventory and pricing backends at once, combines their replies with
/// `when`, and gives up after a deadline with `timeout`, all on the request's NIO event loop.
///
/// Cancellation flows down the same chain: a cancel request on the quote (the client hung up)
/// reaches the timeout, then `when`, then each backend call still running, whose cancel handler
/// stops its work. A deadline that passes does the same for the calls still running, and a
/// backend that fails cancels the other (`cancelOnFailure`).
public struct QuoteService: Sendable {
    /// The backend asked for stock.
    public let inventory: SimulatedBackend
    /// The backend asked for the price.
    public let pricing: SimulatedBackend

    /// Makes the service over two backends.
    public init(inventory: SimulatedBackend, pricing: SimulatedBackend) {
        self.inventory = inventory
        self.pricing = pricing
    }

    /// Quotes `request.item` on `loop`.
    ///
    /// Both backend calls and the deadline's timer run on `loop`. `when` delivers the combined
    /// replies from a Dispatch queue (its documented behaviour); the timeout brings the outcome
    /// back to `loop`, so the returned promise resolves on `loop`.
    ///
    /// - Parameters:
    ///   - request: The item, the backends' simulated behaviour and the deadline.
    ///   - loop: The request's NIO event loop.
    /// - Returns: The quote; rejected with `.timedOut` after `request.timeout`, with
    ///   `.rejected(.failed(backend:))` if a backend fails; cancelled if a cancel request
    ///   reaches it before either.
    public func quote(
        _ request: QuoteRequest, on loop: any EventLoop
    ) -> Promise<Quote, PromiseTimeoutError<BackendError>> {
        let stock = inventory.call(
            item: request.item, latency: request.inventoryLatency,
            outcome: outcome(of: inventory, in: request, answer: "12 in stock"), on: loop)
        let price = pricing.call(
            item: request.item, latency: request.pricingLatency,
            outcome: outcome(of: pricing, in: request, answer: "4.20 EUR"), on: loop)
        return when(fulfilled: stock, price, cancelOnFailure: true)
            .timeout(on: .nio(loop), delay: request.timeout)
            .map(on: .nio(loop)) { stock, price in
                Quote(item: request.item, inventory: stock, pricing: price)
            }
    }

    private func outcome(
        of backend: SimulatedBackend, in request: QuoteRequest, answer: String
    ) -> SimulatedBackend.Outcome {
        request.failingBackend == backend.name ? .fail : .answer(answer)
    }
}
