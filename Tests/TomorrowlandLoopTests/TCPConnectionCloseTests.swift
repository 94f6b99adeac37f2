import Dispatch
import Glibc
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("TCPConnection closing and loop shutdown")
struct TCPConnectionCloseTests {
    private func connect(_ loop: EventLoop, _ port: UInt16) throws -> TCPConnection {
        try #require(
            drive(loop, until: TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10)))?
                .value)
    }

    @Test func closingRejectsThePendingReadAndResolvesClosedWithNil() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let client = try connect(loop, listener.localPort)
        let read = client.read()
        client.close()
        client.close()
        #expect(drive(loop, until: read)?.error == .closed)
        #expect(drive(loop, until: client.closed)?.value == .some(nil))
        #expect(drive(loop, until: client.write([1]))?.error == .closed)
        #expect(drive(loop, until: client.read())?.error == .closed)
        #expect(drive(loop, until: client.flush())?.error == .closed)
    }

    @Test func closingNowRejectsWritesStillWaitingForSocketSpace() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        // A server that never reads: the client's output backs up.
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        let client = try connect(loop, listener.localPort)
        let big = client.write([UInt8](repeating: 42, count: 32 << 20))
        let flushed = client.flush()
        #expect(client.pendingOutputBytes > 0)
        client.close()
        #expect(drive(loop, until: big)?.error == .closed)
        #expect(drive(loop, until: flushed)?.error == .closed)
        #expect(client.pendingOutputBytes == 0)
    }

    @Test func closingAfterFlushingDeliversPendingOutputFirst() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let received = LoopBox<[UInt8]>([])
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            connection.startReading { bytes in
                received.value += bytes
                return bytes.count
            }
        }
        let client = try connect(loop, listener.localPort)
        let payload = pattern(3 << 20)
        let write = client.write(payload)
        let read = client.read()
        client.close(afterFlushing: true)
        #expect(drive(loop, until: read)?.error == .closed)
        #expect(drive(loop, until: write)?.value != nil)
        #expect(drive(loop, until: client.closed)?.value == .some(nil))
        #expect(drive(loop) { received.value.count == payload.count })
        #expect(received.value == payload)
    }

    @Test func closeFromAnotherThreadHopsToTheLoop() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let (listening, resolver) = Promise<TCPListener, TCPError>.makeWithResolver()
        loop.execute {
            resolver.resolve(with: Result { () throws(TCPError) in try startEchoServer(on: loop) })
        }
        let listener = try #require(blockingResult(of: listening)?.value)
        let client = try #require(
            blockingResult(
                of: TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10))
            )?.value)
        let reply = blockingResult(of: client.write([9, 8, 7]).flatMap(on: .immediate) { client.read(exactly: 3) })
        #expect(reply?.value == [9, 8, 7])
        client.close()
        #expect(blockingResult(of: client.closed)?.value == .some(nil))
        loop.shutdown()
        #expect(thread.join())
    }

    @Test func loopShutdownClosesOpenConnectionsAndReleasesThem() throws {
        let loop = EventLoop()
        let serverSides = LoopBox<[Promise<TCPError?, NoError>]>([])
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            serverSides.value.append(connection.closed)
            connection.startReading { $0.count }
        }
        weak var weakClient: TCPConnection?
        let pendingRead: Promise<[UInt8], TCPError>
        let clientClosed: Promise<TCPError?, NoError>
        do {
            let client = try connect(loop, listener.localPort)
            weakClient = client
            pendingRead = client.read()
            clientClosed = client.closed
            client.onWritable = { _ = client }
        }
        #expect(drive(loop) { serverSides.value.count == 1 })
        let attempt = TCPConnection.connect(host: "192.0.2.1", port: 9, on: loop, timeout: .seconds(60))
        loop.shutdown()
        #expect(pendingRead.result?.error == .closed)
        #expect(clientClosed.result?.value == .some(nil))
        #expect(serverSides.value.first?.result?.value == .some(nil))
        #expect(attempt.result?.error == .closed || attempt.result?.error != nil)
        #expect(listener.isClosed)
        #expect(loop.resources.isEmpty)
        // The connection (and the cycle through its onWritable closure) is gone.
        #expect(weakClient == nil)
    }

    @Test func operationsAfterShutdownRejectWithClosed() throws {
        let loop = EventLoop()
        let listener = try startEchoServer(on: loop)
        let client = try connect(loop, listener.localPort)
        loop.shutdown()
        #expect(client.write([1]).result?.error == .closed)
        #expect(client.read().result?.error == .closed)
        #expect(client.flush().result?.error == .closed)
        client.close()
        #expect(
            TCPConnection.connect(host: "127.0.0.1", port: 1, on: loop, timeout: .seconds(1)).result?.error == .closed)
    }

    @Test func aClosedConnectionIsReleased() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        weak var weakClient: TCPConnection?
        do {
            let client = try connect(loop, listener.localPort)
            weakClient = client
            client.close()
        }
        #expect(weakClient == nil)
    }
}
