import Dispatch
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// A name resolver that answers every name with one IP address after a delay, from a Dispatch
/// thread: a slow DNS server without the network.
final class DelayedNameResolver: NameResolver {
    let delay: Duration
    let address: String
    private let asked = Locked<[String]>([])

    /// Answers after `delay` with `address` (an IP literal).
    init(delay: Duration, answering address: String = "127.0.0.1") {
        self.delay = delay
        self.address = address
    }

    /// The names asked for so far.
    var names: [String] { asked.withLock { $0 } }

    func resolve(_ resolution: NameResolution) {
        asked.withLock { $0.append(resolution.host) }
        let nanoseconds =
            Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
        let address = self.address
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            let answer = TCPSocketAddress.literal(host: address, port: resolution.port)
            resolution.complete(with: answer.map { .success($0) } ?? .failure(.addressResolutionFailed(host: address)))
        }
    }
}
