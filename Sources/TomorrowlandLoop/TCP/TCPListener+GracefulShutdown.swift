import Tomorrowland

extension TCPListener {
    /// Stops accepting, lets the connections this listener accepted send what they have queued,
    /// then closes them; after `grace`, closes the ones still sending.
    ///
    /// In order:
    /// 1. The listener closes (as ``close()``): no connection is accepted once this returns, and
    ///    the socket closes on the loop's thread, so new clients are refused.
    /// 2. Every connection it accepted that is still open gets
    ///    ``TCPConnection/close(afterFlushing:)`` with `true`: it reads no more input, refuses new
    ///    writes (they reject with ``TCPError/closed``), sends the output already queued, then
    ///    closes. A connection with nothing queued closes at once. Replies that the server has
    ///    not queued yet when this runs are not sent.
    /// 3. Once `grace` has passed, every connection still open is closed at once, dropping what
    ///    it could not send (a peer that stopped reading).
    ///
    /// The promise is fulfilled once every one of those connections is closed, on the loop's
    /// thread (or, when the loop has shut down, on the calling thread: shutdown closed them all).
    /// It is never rejected or cancelled. Calling this again, or after ``close()``, works on the
    /// connections still open; each call's promise is fulfilled when they are all closed, and the
    /// shortest grace period applies.
    ///
    /// Safe from any thread: on the loop's thread (or while no thread drives the loop) the steps
    /// start before this returns, otherwise when the loop next runs its work.
    ///
    /// - Parameter grace: How long connections may take to send their queued output.
    /// - Returns: A promise fulfilled once every connection this listener accepted is closed.
    @discardableResult
    public func shutdownGracefully(within grace: Duration) -> Promise<Void, NoError> {
        isClosedFlag.store(true, ordering: .releasing)
        let (promise, resolver) = Promise<Void, NoError>.makeWithResolver()
        let request = DrainRequest(resolver)
        let queued = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in
            beginDrain(within: grace, request: request)
        }
        if !queued { resolver.fulfill(with: ()) }
        return promise
    }

    // MARK: Internals

    /// Keeps `connection` in ``openConnections`` until its ``TCPConnection/closed`` resolves; on
    /// the loop's thread, before the accept handler sees the connection.
    func track(_ connection: TCPConnection) {
        let id = ObjectIdentifier(connection)
        openConnections[id] = connection
        acceptCount &+= 1
        acceptOrder[id] = acceptCount
        // `.immediate`: `closed` resolves on the loop's thread (the connection's close, or the
        // loop's shutdown), where this bookkeeping belongs. Weak: a listener dropped by its owner
        // must not be kept alive by the connections it accepted.
        connection.closed.tap(on: .immediate) { [weak self] _ in
            self?.connectionClosed(id)
        }
    }

    /// Step 2 of ``shutdownGracefully(within:)``, on the loop's thread.
    private func beginDrain(within grace: Duration, request: DrainRequest) {
        closeOnLoop()
        if openConnections.isEmpty {
            request.resolver.fulfill(with: ())
            return
        }
        // The state is complete before any connection closes: closing runs user code (promise
        // callbacks on `.immediate`) that may call back into this listener.
        var current = drain ?? GracefulDrain()
        current.requests.append(request)
        // While shutting down, the loop closes the connections itself and runs no timers.
        // The timer holds `self` strongly: the drain's promises live in `self`, and an owner that
        // drops the listener now must not end them early. The cycle ends when the timer runs (its
        // force-close ends the drain) or is cancelled by the drain's end.
        if !loop.isShuttingDown {
            current.forceCloseTimers.append(
                loop.schedule(after: grace) { [self] in forceCloseOpenConnections() })
        }
        drain = current
        for connection in openConnectionsInAcceptOrder() {
            connection.close(afterFlushing: true)
        }
    }

    /// Step 3 of ``shutdownGracefully(within:)``: the grace period is over.
    /// The open connections, oldest first.
    private func openConnectionsInAcceptOrder() -> [TCPConnection] {
        openConnections.sorted { acceptOrder[$0.key, default: 0] < acceptOrder[$1.key, default: 0] }.map(\.value)
    }

    private func forceCloseOpenConnections() {
        for connection in openConnectionsInAcceptOrder() {
            connection.close(afterFlushing: false)
        }
    }

    /// `closed` resolved for the connection `id`; completes a drain whose last connection it was.
    private func connectionClosed(_ id: ObjectIdentifier) {
        openConnections[id] = nil
        acceptOrder[id] = nil
        guard openConnections.isEmpty, let finished = drain else { return }
        drain = nil
        for timer in finished.forceCloseTimers { timer.cancel() }
        for request in finished.requests { request.resolver.fulfill(with: ()) }
    }
}

/// A graceful shutdown in progress: the promises waiting for its end and the timers that end the
/// grace periods.
struct GracefulDrain {
    var requests: [DrainRequest] = []
    var forceCloseTimers: [any PromiseScheduledWork] = []
}

/// Settles the promise of one ``TCPListener/shutdownGracefully(within:)``.
///
/// If the loop releases the hop's closure without running it (the loop shut down meanwhile, and
/// the shutdown closed every connection), `deinit` fulfills the promise: a promise whose resolver
/// is dropped would end cancelled. After a fulfillment it is a no-op.
final class DrainRequest: Sendable {
    let resolver: Promise<Void, NoError>.Resolver

    init(_ resolver: Promise<Void, NoError>.Resolver) {
        self.resolver = resolver
    }

    deinit {
        resolver.fulfill(with: ())
    }
}
