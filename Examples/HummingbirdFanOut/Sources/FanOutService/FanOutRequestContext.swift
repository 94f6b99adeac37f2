import Hummingbird
import NIOCore

/// Hummingbird's request context plus the request's NIO event loop (its channel's), the loop
/// the handlers run their promises on.
public struct FanOutRequestContext: RequestContext {
    /// Hummingbird's own per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The event loop of the connection the request arrived on.
    public let eventLoop: any EventLoop

    /// Made by Hummingbird for each request, from the connection's channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        eventLoop = source.channel.eventLoop
    }
}
