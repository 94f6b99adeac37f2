/// One connection attempt to one address, in progress: a socket's non-blocking `connect`, or a
/// connect across a simulated network. Made by the loop's backend
/// (`EventLoopBackend.connect(to:from:options:completion:)`).
package protocol TCPConnectAttempt: AnyObject {
    /// Whether the attempt still waits for its outcome: its completion has neither run nor been
    /// cancelled.
    var isPending: Bool { get }

    /// Abandons the attempt: its completion never runs, and a connection the peer already
    /// accepted is reset (or its socket closed).
    func cancel()
}
