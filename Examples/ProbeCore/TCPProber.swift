import Tomorrowland
import TomorrowlandLoop

/// Opens one TCP connection: `TCPConnection.connect(host:port:on:timeout:)` in the daemon, a
/// stand-in in tests. Called on the loop's thread.
public typealias TCPConnect = @Sendable (ProbeEndpoint, EventLoop, Duration) -> Promise<TCPConnection, TCPError>

/// The real prober: a TCP connect on `loop`, closed as soon as it succeeds.
///
/// The latency is the time from the start of the attempt to the connection, on the loop's clock
/// (`loop.now`: the monotonic clock, or virtual time on a simulated host). The scheduler's
/// `timeout` enforces the connect timeout and cancels a late attempt (which closes its socket, or
/// abandons its name lookup); `backstop` is the connect's own deadline, in case nobody cancels. Host names are resolved off the loop, so an endpoint whose
/// name does not resolve (or whose DNS server does not answer) delays no other endpoint.
///
/// - Parameters:
///   - loop: The loop that makes the connections; the prober is called on its thread.
///   - backstop: The deadline passed to `connect`.
///   - connect: How to connect; `TCPConnection.connect` unless a test supplies another.
public func tcpProber(
    on loop: EventLoop, backstop: Duration,
    connect: @escaping TCPConnect = { endpoint, loop, timeout in
        TCPConnection.connect(host: endpoint.host, port: endpoint.port, on: loop, timeout: timeout)
    }
) -> ProbeScheduler.Prober {
    { endpoint in
        // The loop's clock: virtual when the prober runs on a simulated host.
        let start = loop.now
        return connect(endpoint, loop, backstop)
            .map(on: .immediate) { connection -> Duration in
                let latency = loop.now - start
                connection.close()
                return latency
            }
            .mapError(on: .immediate) { ProbeFailure.tcp($0) }
    }
}
