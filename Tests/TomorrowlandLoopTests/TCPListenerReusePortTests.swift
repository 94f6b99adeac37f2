import Glibc
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("TCPListener with SO_REUSEPORT")
struct TCPListenerReusePortTests {
    /// Counts accepted connections per loop of a group.
    final class AcceptCounts: Sendable {
        private let first = Atomic<Int>(0)
        private let second = Atomic<Int>(0)
        var total: Int { value(0) + value(1) }
        func value(_ index: Int) -> Int {
            index == 0 ? first.load(ordering: .relaxed) : second.load(ordering: .relaxed)
        }
        func add(_ index: Int) {
            if index == 0 {
                first.add(1, ordering: .relaxed)
            } else {
                second.add(1, ordering: .relaxed)
            }
        }
    }

    @Test func listenersOnEachLoopOfAGroupShareThePort() throws {
        let group = EventLoopGroup(loopCount: 2)
        defer { group.syncShutdownGracefully() }
        let counts = AcceptCounts()
        let options = {
            var options = TCPListenerOptions()
            options.reusePort = true
            return options
        }()
        // From the test's thread: `bind` hops to each loop of the running group.
        func listen(_ index: Int, port: UInt16) -> Promise<UInt16, TCPError> {
            let loop = group.loops[index]
            return TCPListener.bind(host: "127.0.0.1", port: port, on: loop, options: options) { connection in
                #expect(loop.inEventLoop)
                counts.add(index)
                connection.close()
            }.map(on: .immediate) { $0.localPort }
        }
        let port = try #require(blockingResult(of: listen(0, port: 0))?.value)
        #expect(blockingResult(of: listen(1, port: port))?.value == port)

        let client = EventLoop()
        defer { client.shutdown() }
        let connections = 64
        let attempts = (0..<connections).map { _ in
            TCPConnection.connect(host: "127.0.0.1", port: port, on: client, timeout: .seconds(10))
                .map(on: .immediate) { connection in connection.close() }
        }
        #expect(drive(client, until: when(fulfilled: attempts))?.value?.count == connections)
        #expect(drive(client) { counts.total == connections })
        // The kernel spreads connections by hashing their addresses: with 64 of them, each
        // listener gets some unless the hash is broken (odds 2^-63).
        #expect(counts.value(0) > 0)
        #expect(counts.value(1) > 0)
    }

    @Test func withoutReusePortASecondListenerOnThePortFails() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        var options = TCPListenerOptions()
        options.reusePort = true
        let first = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop, options: options) { _ in }
        #expect(throws: TCPError.bindFailed(errno: EADDRINUSE)) {
            try TCPListener.listen(host: "127.0.0.1", port: first.localPort, on: loop) { _ in }
        }
    }
}
