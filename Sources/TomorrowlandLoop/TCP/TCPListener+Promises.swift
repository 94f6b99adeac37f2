import Tomorrowland

extension TCPListener {
    /// Listens on `host`:`port` from any thread: hops to the loop, binds there, and resolves with
    /// the listener, which hands each accepted connection to `onAccept` on the loop's thread.
    ///
    /// This is the form to use off the loop's thread: for the loops of an ``EventLoopGroup``, from
    /// a Dispatch queue, or while the loop may be shutting down. On the loop's thread, or while no
    /// thread drives the loop, it binds before returning (the promise is already resolved).
    /// Otherwise it binds when the loop next runs its work. The connection starts idle: call
    /// ``TCPConnection/startReading(_:)`` or a promise read in `onAccept`.
    ///
    /// Outcomes (the promise is never cancelled):
    /// - Fulfilled, on the loop's thread, with the accepting listener.
    /// - Rejected with ``TCPError/addressResolutionFailed(host:)``, on the calling thread, when
    ///   `host` is no address; with ``TCPError/bindFailed(errno:)``, on the loop's thread, when no
    ///   address binds.
    /// - Rejected with ``TCPError/closed`` when the loop has shut down (on the calling thread), or
    ///   shuts down before the bind runs (on the thread that shuts it down). Nothing is bound then.
    ///   A listener bound just before shutdown is fulfilled, then closed by the shutdown like any
    ///   other: check ``isClosed``.
    ///
    /// - Parameters:
    ///   - host: An IPv4 or IPv6 literal ("127.0.0.1", "::1", "0.0.0.0", "::"), "localhost" (the
    ///     first address it resolves to that binds), or "" / "*" for every address. It is resolved
    ///     on the calling thread.
    ///   - port: The port, 0 for one the kernel picks (read it from ``localPort``).
    ///   - loop: The loop that binds, accepts and runs `onAccept`.
    ///   - options: Socket options; ``TCPListenerOptions/connection`` applies to accepted
    ///     connections.
    ///   - onAccept: Called on the loop's thread with each new connection.
    /// - Returns: A promise of the listener; see the outcomes above.
    @preconcurrency
    public static func bind(
        host: String, port: UInt16, on loop: EventLoop,
        options: TCPListenerOptions = .init(),
        onAccept: @escaping @Sendable (TCPConnection) -> Void
    ) -> Promise<TCPListener, TCPError> {
        let target: TCPListenTarget
        do {
            target = try loop.backend.dynamic.listenTarget(host: host, port: port)
        } catch {
            return Promise(rejected: error)
        }
        let (promise, resolver) = Promise<TCPListener, TCPError>.makeWithResolver()
        let request = BindRequest(resolver)
        let queued = loop.submitOnLoop(runsInlineWhenPossible: true) {
            request.resolver.resolve(
                with: loop.backend.dynamic.bindListener(target, on: loop, options: options, onAccept: onAccept))
        }
        if !queued { resolver.reject(with: .closed) }
        return promise
    }
}

/// Settles the promise of one ``TCPListener/bind(host:port:on:options:onAccept:)``.
///
/// The hop's closure owns it. If the loop releases that closure without running it (work that
/// arrived too late for the shutdown's drain), this object's `deinit` rejects the promise with
/// ``TCPError/closed`` instead of leaving the resolver to be dropped, which would cancel it. After
/// the closure ran, the rejection is a no-op: a promise resolves once.
private final class BindRequest: Sendable {
    let resolver: Promise<TCPListener, TCPError>.Resolver

    init(_ resolver: Promise<TCPListener, TCPError>.Resolver) {
        self.resolver = resolver
    }

    deinit {
        resolver.reject(with: .closed)
    }
}
