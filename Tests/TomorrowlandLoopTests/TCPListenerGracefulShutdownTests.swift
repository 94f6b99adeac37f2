import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

@Suite("TCPListener.shutdownGracefully(within:)")
struct TCPListenerGracefulShutdownTests {
    /// 16 MB: far more than the kernel buffers of a client whose receive buffer is fixed at
    /// 64 kB plus the server's send buffer (at most 4 MB here), so most of it is still queued in
    /// the connection when the graceful shutdown starts.
    static let largeReply = repeated(pattern(1 << 16), count: 256)
    static let smallReceiveBuffer: Int32 = 1 << 16

    /// What a ``ReplyServer``'s accept handler saw, from the loop's thread.
    final class AcceptLog: Sendable {
        let accepted = Atomic<Int>(0)
        let writes = Recorder<Promise<Void, TCPError>>()
    }

    /// A listener on a loop that a thread of its own runs; each accepted connection is answered
    /// with `reply` at once.
    final class ReplyServer: Sendable {
        let loop = EventLoop()
        let thread: LoopThread
        let listener: TCPListener
        let log = AcceptLog()

        init(reply: [UInt8]) throws {
            thread = LoopThread(loop)
            #expect(thread.waitUntilRunning())
            let log = log
            let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { connection in
                if !reply.isEmpty { log.writes.record(connection.write(reply)) }
                log.accepted.add(1, ordering: .releasing)
            }
            listener = try #require(blockingResult(of: bound)?.value)
        }

        var acceptedCount: Int { log.accepted.load(ordering: .acquiring) }
        var firstWrite: Promise<Void, TCPError>? { log.writes.values.first }

        /// Waits (polling, in real time) until `count` connections were accepted.
        func waitForAccepted(_ count: Int) -> Bool {
            waitUntil { acceptedCount >= count }
        }

        func stop() {
            loop.shutdown()
            #expect(thread.join())
        }
    }

    @Test func aLargeReplyInFlightIsSentInFullAndThenTheClientSeesTheEnd() throws {
        let server = try ReplyServer(reply: Self.largeReply)
        defer { server.stop() }
        let client = try BlockingTCPClient.connect(
            port: server.listener.localPort, receiveBuffer: Self.smallReceiveBuffer
        ).get()
        #expect(server.waitForAccepted(1))

        let drained = server.listener.shutdownGracefully(within: .seconds(30))
        let joined = server.listener.shutdownGracefully(within: .seconds(30))
        #expect(server.listener.isClosed)
        // Megabytes are still queued for a client that has not read yet: nothing is closed.
        #expect(drained.result == nil)

        let (bytes, end) = client.readToEnd()
        #expect(end == .endOfInput)
        #expect(isConcatenation(bytes, of: Self.largeReply))
        #expect(Outcome(blockingResult(of: drained)) == Outcome<NoError>.fulfilled)
        #expect(Outcome(blockingResult(of: joined)) == Outcome<NoError>.fulfilled)
        let write = try #require(server.firstWrite)
        #expect(Outcome(blockingResult(of: write)) == Outcome<TCPError>.fulfilled)
        #expect(server.acceptedCount == 1)
    }

    @Test func noConnectionIsAcceptedOnceItReturns() throws {
        let server = try ReplyServer(reply: [])
        defer { server.stop() }
        let drained = server.listener.shutdownGracefully(within: .seconds(30))
        // Refused once the socket is closed; before that, the kernel may complete the handshake
        // from the backlog, and the connection is then reset or ended, never handed over. A
        // handshake the close cuts short fails `connect` itself with a reset (seen once under
        // ThreadSanitizer in CI).
        switch BlockingTCPClient.connect(port: server.listener.localPort, timeout: .seconds(5)) {
        case .success(let late):
            let (bytes, end) = late.readToEnd()
            #expect(bytes.isEmpty)
            #expect(end == .reset || end == .endOfInput)
        case .failure(let error):
            #expect(error.errno == ECONNREFUSED || error.errno == ECONNRESET)
        }
        #expect(Outcome(blockingResult(of: drained)) == Outcome<NoError>.fulfilled)
        #expect(server.acceptedCount == 0)
        // After the hop: refused, always.
        #expect(throws: BlockingTCPClientError(errno: ECONNREFUSED)) {
            try BlockingTCPClient.connect(port: server.listener.localPort).get()
        }
    }

    @Test func aConnectionThatNeverDrainsIsClosedWhenTheGracePeriodEnds() throws {
        let server = try ReplyServer(reply: Self.largeReply)
        defer { server.stop() }
        let client = try BlockingTCPClient.connect(
            port: server.listener.localPort, receiveBuffer: Self.smallReceiveBuffer
        ).get()
        #expect(server.waitForAccepted(1))

        let start = ContinuousClock.now
        let drained = server.listener.shutdownGracefully(within: .milliseconds(300))
        let result = blockingResult(of: drained, timeout: .seconds(10))
        let elapsed = ContinuousClock.now - start
        #expect(Outcome(result) == Outcome<NoError>.fulfilled)
        #expect(elapsed >= .milliseconds(300))
        #expect(elapsed < .seconds(10))
        // The reply was cut short: its write rejects, and the client gets a part, then the end.
        let write = try #require(server.firstWrite)
        #expect(Outcome(blockingResult(of: write)) == Outcome<TCPError>.rejected(.closed))
        let (bytes, end) = client.readToEnd()
        #expect(bytes.count < Self.largeReply.count)
        #expect(end == .endOfInput || end == .reset)
    }

    @Test func anIdleConnectionClosesAtOnceWithoutWaitingForTheGracePeriod() throws {
        let server = try ReplyServer(reply: [])
        defer { server.stop() }
        let client = try BlockingTCPClient.connect(port: server.listener.localPort).get()
        #expect(server.waitForAccepted(1))
        let start = ContinuousClock.now
        let drained = server.listener.shutdownGracefully(within: .seconds(60))
        #expect(Outcome(blockingResult(of: drained)) == Outcome<NoError>.fulfilled)
        #expect(ContinuousClock.now - start < .seconds(10))
        let (bytes, end) = client.readToEnd()
        #expect(bytes.isEmpty)
        #expect(end == .endOfInput)
    }

    @Test func connectionsAcceptedBeforeCloseAreClosedByALaterGracefulShutdown() throws {
        let server = try ReplyServer(reply: [])
        defer { server.stop() }
        let client = try BlockingTCPClient.connect(port: server.listener.localPort, timeout: .seconds(1)).get()
        #expect(server.waitForAccepted(1))
        server.listener.close()
        // close() leaves the connection open: no end of input yet.
        #expect(client.readToEnd().end == .timedOut)
        let drained = server.listener.shutdownGracefully(within: .seconds(60))
        #expect(Outcome(blockingResult(of: drained)) == Outcome<NoError>.fulfilled)
        #expect(client.readToEnd().end == .endOfInput)
    }

    @Test func withNoConnectionsItResolvesBeforeReturningWhenNoThreadDrivesTheLoop() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        let drained = listener.shutdownGracefully(within: .seconds(60))
        #expect(Outcome(drained.result) == Outcome<NoError>.fulfilled)
        #expect(throws: BlockingTCPClientError(errno: ECONNREFUSED)) {
            try BlockingTCPClient.connect(port: listener.localPort).get()
        }
    }

    @Test func afterTheLoopShutDownItResolvesAtOnce() throws {
        let loop = EventLoop()
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        loop.shutdown()
        let drained = listener.shutdownGracefully(within: .seconds(60))
        #expect(Outcome(drained.result) == Outcome<NoError>.fulfilled)
    }

    @Test func aLoopShutdownDuringTheGracePeriodEndsTheDrain() throws {
        let server = try ReplyServer(reply: Self.largeReply)
        let client = try BlockingTCPClient.connect(
            port: server.listener.localPort, receiveBuffer: Self.smallReceiveBuffer
        ).get()
        #expect(server.waitForAccepted(1))
        let drained = server.listener.shutdownGracefully(within: .seconds(60))
        server.stop()
        #expect(Outcome(blockingResult(of: drained, timeout: .seconds(10))) == Outcome<NoError>.fulfilled)
        _ = client
    }

    // MARK: Tracking the accepted connections

    @Test func theListenerForgetsAConnectionOnceItCloses() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let accepted = LoopBox<TCPConnection?>(nil)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { accepted.value = $0 }
        let client = drive(
            loop,
            until: TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?
            .value
        #expect(drive(loop) { accepted.value != nil })
        #expect(listener.openConnections.count == 1)
        weak let weakConnection = accepted.value
        accepted.value?.close()
        accepted.value = nil
        #expect(drive(loop, until: try #require(client).read())?.value == [])
        #expect(listener.openConnections.isEmpty)
        #expect(weakConnection == nil)
    }

    @Test func aClosedListenerIsReleasedWhileItsConnectionsStayOpen() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let accepted = LoopBox<TCPConnection?>(nil)
        weak var weakListener: TCPListener?
        let client: TCPConnection?
        do {
            let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { accepted.value = $0 }
            weakListener = listener
            client =
                drive(
                    loop,
                    until: TCPConnection.connect(
                        host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?
                .value
            #expect(drive(loop) { accepted.value != nil })
            listener.close()
        }
        #expect(weakListener == nil)
        // The connection still works.
        let echoed = drive(
            loop, until: try #require(client).write([7]).flatMap(on: .immediate) { accepted.value!.read(exactly: 1) })
        #expect(echoed?.value == [7])
    }
}
