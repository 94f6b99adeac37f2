/// The accepting end under a ``TCPListener``: the seam between the listener's one implementation
/// (the accept handler, pause and resume, the back-off after descriptor exhaustion, graceful
/// shutdown) and what produces connections.
///
/// Two implementations: `TCPSocketAcceptor` (a listening socket under libevent's
/// `evconnlistener`) and a simulated host's listening port (module TomorrowlandSimulation). The
/// acceptor reports through ``TCPListener/acceptorAccepted(_:)`` and
/// ``TCPListener/acceptorFailed(errno:)``, on the loop's thread, only while accepting is enabled.
/// Every member is called on the loop's thread.
package protocol TCPAcceptor: AnyObject {
    /// Binds the acceptor to its listener; called once, before any other member. The acceptor
    /// keeps no strong reference to it.
    func attach(to listener: TCPListener)
    /// Starts or stops taking connections from the backlog (they wait there meanwhile).
    func setAccepting(_ enabled: Bool)
    /// Stops for good and releases the port; connections still in the backlog are refused.
    /// Idempotent.
    func close()
}
