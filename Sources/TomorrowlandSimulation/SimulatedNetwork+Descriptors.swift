import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

extension SimulatedNetwork {
    /// `port`'s host is out of descriptors: the accept fails with `EMFILE` as `accept(2)` would,
    /// and the connection stays in the backlog. The listener's own back-off answers it (it stops
    /// accepting for `TCPListener.resourceBackoff`, then asks again), as on a real socket.
    func failAccept(_ port: SimulatedPort, listener: TCPListener) {
        record(.acceptFailed, "\(port.host.name):\(port.port) EMFILE")
        runCallback(on: port.loop) { listener.acceptorFailed(errno: EMFILE) }
    }

    /// A connection attempt met a full backlog and was dropped, as Linux drops the SYN (with
    /// `tcp_abort_on_overflow` off, its default): the connecting host sends it again after its
    /// retransmission timeout, 1 s, then 2, 4, 8, 16 and 32 s (`tcp_syn_retries` is 6), so the
    /// attempt gets in once the backlog has room, or times out first (the caller's timeout).
    func retransmitSyn(_ attempt: SimulatedConnectAttempt, ip: String, port: UInt16) {
        guard attempt.synRetransmissions < 6 else { return }
        let timeout: UInt64 = 1_000_000_000 << UInt64(attempt.synRetransmissions)
        attempt.synRetransmissions += 1
        schedule(.syn(attempt, ip: ip, port: port), after: timeout + latency.draw(&random))
    }
}
