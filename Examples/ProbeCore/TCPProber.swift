import Tomorrowland
import TomorrowlandLoop

/// The real prober: a TCP connect on `loop`, closed as soon as it succeeds.
///
/// The latency is the time from the start of the attempt to the connection, on the monotonic
/// clock. The scheduler's `timeout` enforces the connect timeout and cancels a late attempt
/// (which closes its socket); `backstop` is the connect's own deadline, in case nobody cancels.
public func tcpProber(on loop: EventLoop, backstop: Duration) -> ProbeScheduler.Prober {
    { endpoint in
        let start = ContinuousClock.now
        return TCPConnection.connect(host: endpoint.host, port: endpoint.port, on: loop, timeout: backstop)
            .map(on: .immediate) { connection -> Duration in
                let latency = ContinuousClock.now - start
                connection.close()
                return latency
            }
            .mapError(on: .immediate) { ProbeFailure.tcp($0) }
    }
}
