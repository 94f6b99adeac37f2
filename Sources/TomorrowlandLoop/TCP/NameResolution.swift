import Tomorrowland

/// One host name lookup in flight: what to resolve, and where its answer goes.
///
/// The connect that starts it may abandon it (cancelled, timed out, or its loop shut down) while
/// the resolver still works; the late answer is then discarded, and abandoning releases the
/// answer handler, with everything it captured, at once rather than when (if ever) the resolver
/// answers.
public final class NameResolution: Sendable {
    /// Receives the answer; called at most once, on the thread that completes the resolution.
    public typealias AnswerHandler = @Sendable (Result<[TCPSocketAddress], TCPError>) -> Void

    /// The host to resolve: a name, never an IP literal (those skip resolution).
    public let host: String
    /// The port the addresses carry.
    public let port: UInt16
    /// The handler until it is called or the resolution is abandoned, nil after.
    private let handler: LockedValue<AnswerHandler?>

    /// A resolution of `host` and `port` whose answer goes to `onAnswer`, on the thread that
    /// completes it.
    package init(host: String, port: UInt16, onAnswer: @escaping AnswerHandler) {
        self.host = host
        self.port = port
        handler = LockedValue(onAnswer)
    }

    /// Whether nobody waits for the answer any more (abandoned, or already answered).
    public var isAbandoned: Bool {
        handler.withLock { $0 == nil }
    }

    /// Delivers the answer, on the calling thread, unless the resolution was abandoned or already
    /// answered; returns whether the answer was delivered. Safe from any thread.
    @discardableResult
    public func complete(with result: Result<[TCPSocketAddress], TCPError>) -> Bool {
        // Taken out under the lock, called after it: the handler hops to a loop, which may run
        // user code on this thread.
        guard let onAnswer = takeHandler() else { return false }
        onAnswer(result)
        return true
    }

    /// Discards the answer to come and releases the answer handler. Safe from any thread.
    package func abandon() {
        // Released when the discarded result goes, after the lock: the deinits of what the
        // handler captured never run under it.
        _ = takeHandler()
    }

    /// The handler, leaving nil in its place.
    private func takeHandler() -> AnswerHandler? {
        handler.withLock { handler in
            let taken = handler
            handler = nil
            return taken
        }
    }
}
