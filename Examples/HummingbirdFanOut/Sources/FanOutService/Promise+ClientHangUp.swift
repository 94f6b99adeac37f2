import Hummingbird
import Tomorrowland

extension Promise where Value: Sendable, Error: Sendable {
    /// Waits for the promise's result in a Hummingbird handler, requesting its cancellation if
    /// the client hangs up first.
    ///
    /// Two things request cancellation: Hummingbird's inbound-close hook (the client closed its
    /// side of the connection: `RequestBody.consumeWithInboundCloseHandler`), and cancellation of
    /// the handler's task (the server shutting down). The request runs on the thread that noticed
    /// it (the connection's loop, or the cancelling task); the promise's `onRequestCancel`
    /// handlers run on their own contexts. The wait itself still ends only with the promise's
    /// result, which is `.cancelled` once its producers honour the request.
    ///
    /// Consumes the request body: call it only for requests whose body you do not read, and
    /// only once per request.
    ///
    /// - Parameter request: The request the promise answers.
    /// - Returns: The promise's result.
    public func resultCancellingOnHangUp(of request: Request) async throws -> PromiseResult<Value, Error> {
        let promise = self
        return try await request.body.consumeWithInboundCloseHandler { _ in
            await withTaskCancellationHandler {
                await promise.resolvedResult
            } onCancel: {
                promise.requestCancel()
            }
        } onInboundClosed: {
            promise.requestCancel()
        }
    }
}
