import TomorrowlandLoop

/// A connection attempt crossing a simulated network: the SYN on its way, or the answer on its
/// way back.
final class SimulatedConnectAttempt: TCPConnectAttempt {
    let id: Int
    let host: SimulatedHost
    let loop: EventLoop
    let options: TCPConnectionOptions
    /// Taken when the attempt completes or is cancelled: it runs at most once.
    var completion: ((Result<any TCPTransport, TCPError>) -> Void)?
    /// How many times the SYN went again after a full backlog dropped it.
    var synRetransmissions = 0

    init(
        id: Int, host: SimulatedHost, loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) {
        self.id = id
        self.host = host
        self.loop = loop
        self.options = options
        self.completion = completion
    }

    var isCancelled: Bool { completion == nil }

    var isPending: Bool { completion != nil }

    func cancel() {
        completion = nil
    }
}
