import Glibc
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("TCPConnection.connect")
struct TCPConnectionConnectTests {
    /// A port nothing listens on: bound by a listener that is closed at once.
    private func closedPort(_ loop: EventLoop) throws -> UInt16 {
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        listener.close()
        return listener.localPort
    }

    /// A raw listening socket with a backlog of 0 that never accepts: once its queue holds one
    /// connection, the kernel drops further SYNs and those connects hang.
    private func saturatedListener() throws -> (fd: Int32, port: UInt16) {
        try rawListeningSocket(backlog: 0)
    }

    @Test func connectingToAClosedPortFailsWithConnectionRefused() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let port = try closedPort(loop)
        let result = drive(
            loop, until: TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10)))
        #expect(result?.error == .connectFailed(errno: ECONNREFUSED))
        #expect(loop.resources.isEmpty)
    }

    @Test func aConnectThatDoesNotCompleteTimesOut() throws {
        // Non-routable addresses are refused at once in this environment, so the hang comes from
        // a listener whose accept queue is full (the kernel drops the SYN and the client retries).
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (fd, port) = try saturatedListener()
        defer { close(fd) }
        var connected: [TCPConnection] = []
        var outcome: TCPError?
        for _ in 0..<8 {
            let started = ContinuousClock.now
            let attempt = drive(
                loop, until: TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .milliseconds(300))
            )
            if let connection = attempt?.value {
                connected.append(connection)
                continue
            }
            outcome = attempt?.error
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(290))
            #expect(elapsed < .seconds(10))
            break
        }
        #expect(outcome == .timedOut)
        // The abandoned socket is closed and the attempt unregistered.
        #expect(loop.resources.count == connected.count)
    }

    @Test func cancellingAConnectAbandonsIt() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (fd, port) = try saturatedListener()
        defer { close(fd) }
        let filler = TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10))
        _ = drive(loop, until: filler)
        let attempt = TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(60))
        _ = drive(loop, until: loop.sleep(for: .milliseconds(20)))
        attempt.requestCancel()
        let result = drive(loop, until: attempt)
        // Cancelled, unless the kernel let that one through before the cancel.
        #expect(result?.isCancelled == true || result?.value != nil)
        if result?.isCancelled == true {
            #expect(loop.resources.count == 1)
        }
    }

    @Test func anUnknownHostFailsWithAddressResolutionFailed() {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let result = drive(
            loop, until: TCPConnection.connect(host: "no such host.invalid", port: 1, on: loop, timeout: .seconds(10)))
        #expect(result?.error == .addressResolutionFailed(host: "no such host.invalid"))
    }

    @Test func localhostFallsBackToTheNextAddress() throws {
        // A listener on 127.0.0.1 only: if "localhost" resolves to ::1 first, that attempt is
        // refused and the IPv4 address is tried next.
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let client = try #require(
            drive(
                loop,
                until: TCPConnection.connect(
                    host: "localhost", port: listener.localPort, on: loop, timeout: .seconds(10)))?.value)
        #expect(client.remoteDescription == "127.0.0.1:\(listener.localPort)")
        #expect(drive(loop, until: client.write([5]).flatMap(on: .immediate) { client.read(exactly: 1) })?.value == [5])
    }

    @Test func connectFromAnotherThreadWhileTheLoopRuns() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let client = try #require(connectToEchoServer(onRunning: loop))
        #expect(client.loop === loop)
        let reply = blockingResult(of: client.write([4, 2]).flatMap(on: .immediate) { client.read(exactly: 2) })
        #expect(reply?.value == [4, 2])
        loop.shutdown()
        #expect(thread.join())
        #expect(client.closed.result?.value == .some(nil))
    }
}
