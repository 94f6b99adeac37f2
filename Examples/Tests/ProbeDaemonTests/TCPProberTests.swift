import Glibc
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

@testable import ProbeCore

@Suite("tcpProber on a real loop")
struct TCPProberTests {
    /// A socket listening on 127.0.0.1 that never accepts (connects complete into its backlog).
    private func listeningSocket() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    @Test func anEndpointWhoseNameNeverResolvesDelaysNoOtherEndpoint() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (listener, openPort) = try listeningSocket()
        defer { close(listener) }
        let (closed, closedPort) = try listeningSocket()
        close(closed)

        let silent = SilentNameResolver()
        let unresolvable = ProbeEndpoint(host: "no-answer.example", port: 80)
        let open = ProbeEndpoint(host: "127.0.0.1", port: openPort)
        let refused = ProbeEndpoint(host: "127.0.0.1", port: closedPort)
        var configuration = ProbeScheduler.Configuration(endpoints: [unresolvable, open, refused])
        // Long enough that the reachable endpoints answer well within it on a loaded machine too.
        configuration.connectTimeout = .seconds(2)
        configuration.retries = 0
        configuration.rounds = 1
        configuration.interval = .seconds(60)

        // When each endpoint's attempt settled, from the round's start.
        let started = ContinuousClock.now
        let settled = Locked<[ProbeEndpoint: Duration]>([:])
        let connect = tcpProber(on: loop, backstop: .seconds(30)) { endpoint, loop, timeout in
            TCPConnection.connect(
                host: endpoint.host, port: endpoint.port, on: loop, timeout: timeout, nameResolver: silent)
        }
        let prober: ProbeScheduler.Prober = { endpoint in
            let attempt = connect(endpoint)
            // `tap` does not count as an observer: the scheduler's timeout still cancels `attempt`.
            _ = attempt.tap(on: .immediate) { _ in
                settled.withLock { $0[endpoint] = ContinuousClock.now - started }
            }
            return attempt
        }
        let statuses = Locked<[ProbeStatus]>([])
        let scheduler = ProbeScheduler(
            configuration: configuration, executor: loop, prober: prober, onTransition: { _ in },
            onRound: { _, round in statuses.withLock { $0 = round } })
        scheduler.start()
        let outcome = loop.run(until: scheduler.finished).value
        let roundTook = ContinuousClock.now - started

        #expect(outcome == .completed(rounds: 1))
        let reported = statuses.value
        try #require(reported.count == 3)
        #expect(reported[0] == .down(.timedOut))
        #expect(reported[1].isUp)
        #expect(reported[2] == .down(.tcp(.connectFailed(errno: ECONNREFUSED))))
        // The reachable endpoints answer before the name that never resolves times out: it
        // delays neither. The round ends with that endpoint's timeout, not long after (the
        // bound is generous for a loaded machine and still short of the 30 s backstop).
        let times = settled.value
        let timedOut = try #require(times[unresolvable])
        for endpoint in [open, refused] {
            let time = try #require(times[endpoint])
            #expect(time < timedOut, "\(endpoint) settled after \(time), the unresolvable one at \(timedOut)")
        }
        #expect(timedOut >= .milliseconds(1_990))
        #expect(roundTook >= .milliseconds(1_990))
        #expect(roundTook < .seconds(20))
        // The timed-out attempt abandoned its lookup.
        #expect(silent.resolutions.map(\.host) == ["no-answer.example"])
        #expect(silent.resolutions.allSatisfy { $0.isAbandoned })
    }
}
