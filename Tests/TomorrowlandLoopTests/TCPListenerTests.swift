import Glibc
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("TCPListener")
struct TCPListenerTests {
    @Test func listeningOnPortZeroBindsAnEphemeralPort() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        #expect(listener.localPort != 0)
        #expect(listener.loop === loop)
        #expect(!listener.isClosed)
    }

    @Test func acceptedConnectionsReachTheCallbackOnTheLoopThread() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let accepted = LoopBox<[String]>([])
        let (firstAccept, resolver) = Promise<Void, NoError>.makeWithResolver()
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            #expect(loop.inEventLoop)
            accepted.value.append(connection.remoteDescription)
            resolver.fulfill(with: ())
        }
        let client = drive(
            loop,
            until: TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?
            .value
        _ = drive(loop, until: firstAccept)
        #expect(accepted.value.count == 1)
        let clientPort = try #require(client).localPort
        #expect(accepted.value.first == "127.0.0.1:\(clientPort)")
    }

    @Test func bindingAPortInUseThrowsBindFailed() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let first = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        #expect(throws: TCPError.bindFailed(errno: EADDRINUSE)) {
            try TCPListener.listen(host: "127.0.0.1", port: first.localPort, on: loop) { _ in }
        }
    }

    @Test func anUnresolvableHostThrowsAddressResolutionFailed() {
        let loop = EventLoop()
        defer { loop.shutdown() }
        #expect(throws: TCPError.addressResolutionFailed(host: "not an address")) {
            try TCPListener.listen(host: "not an address", port: 0, on: loop) { _ in }
        }
    }

    @Test func anIPv6LiteralListensAndAccepts() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener: TCPListener
        do {
            listener = try startListener(host: "::1", on: loop)
        } catch TCPError.bindFailed(let code) where code == EADDRNOTAVAIL || code == EAFNOSUPPORT {
            // No IPv6 loopback in this environment: nothing to test.
            return
        }
        let client = drive(
            loop, until: TCPConnection.connect(host: "::1", port: listener.localPort, on: loop, timeout: .seconds(10)))?
            .value
        let reply = drive(
            loop,
            until: try #require(client).write(Array("six".utf8)).flatMap(on: .immediate) { client!.read(exactly: 3) })
        #expect(reply?.value == Array("six".utf8))
        #expect(client?.remoteDescription == "[::1]:\(listener.localPort)")
    }

    @Test func localhostListensAndConnects() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startListener(host: "localhost", on: loop)
        let client = drive(
            loop,
            until: TCPConnection.connect(host: "localhost", port: listener.localPort, on: loop, timeout: .seconds(10)))?
            .value
        let reply = drive(
            loop, until: try #require(client).write([1, 2, 3]).flatMap(on: .immediate) { client!.read(exactly: 3) })
        #expect(reply?.value == [1, 2, 3])
    }

    @Test func closingStopsAcceptingAndFreesThePort() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let port = listener.localPort
        listener.close()
        listener.close()
        #expect(listener.isClosed)
        let result = drive(
            loop, until: TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10)))
        #expect(result?.error == .connectFailed(errno: ECONNREFUSED))
        // The socket is closed: the port can be bound again.
        let again = try TCPListener.listen(host: "127.0.0.1", port: port, on: loop) { _ in }
        #expect(again.localPort == port)
    }

    @Test func pausedListenerLeavesConnectionsInTheBacklogUntilResumed() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let acceptedCount = LoopBox(0)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            acceptedCount.value += 1
            connection.close()
        }
        let paused = Promise<Void, NoError>(on: .loop(loop)) { resolver in
            listener.pauseAccepting()
            resolver.fulfill(with: ())
        }
        _ = drive(loop, until: paused)
        // The kernel completes the handshake from the backlog even while we do not accept.
        let client = drive(
            loop,
            until: TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?
            .value
        #expect(client != nil)
        let idle = loop.sleep(for: .milliseconds(50))
        _ = drive(loop, until: idle)
        #expect(acceptedCount.value == 0)
        let resumed = Promise<Void, NoError>(on: .loop(loop)) { resolver in
            listener.resumeAccepting()
            resolver.fulfill(with: ())
        }
        _ = drive(loop, until: resumed)
        #expect(drive(loop) { acceptedCount.value == 1 })
        // The server closed it: the client sees end of input.
        #expect(drive(loop, until: try #require(client).read())?.value == [])
    }

    @Test func pausingAndResumingFromAnotherThreadWhileTheLoopRunsTakesEffectOnTheLoop() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        defer {
            loop.shutdown()
            #expect(thread.join())
        }
        let accepted = Locked(0)
        let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { connection in
            accepted.withLock { $0 += 1 }
            connection.close()
        }
        let listener = try #require(blockingResult(of: bound)?.value)
        // From a thread that does not drive the loop: the call hands the work to the loop.
        listener.pauseAccepting()
        // The pause hopped to the loop; a round trip through the loop comes after it.
        #expect(blockingResult(of: Promise<Void, NoError>(on: .loop(loop)) { $0.fulfill(with: ()) }) != nil)
        // The kernel completes the handshake from the backlog; the listener does not accept.
        let client = try BlockingTCPClient.connect(port: listener.localPort, timeout: .milliseconds(200)).get()
        #expect(client.readToEnd().end == .timedOut)
        #expect(accepted.value == 0)
        listener.resumeAccepting()
        client.setReadTimeout(.seconds(10))
        #expect(client.readToEnd().end == .endOfInput)
        #expect(accepted.value == 1)
    }

    @Test func loopShutdownClosesTheListener() throws {
        let loop = EventLoop()
        let listener = try startEchoServer(on: loop)
        let port = listener.localPort
        loop.shutdown()
        #expect(listener.isClosed)
        // The port is free again.
        let other = EventLoop()
        defer { other.shutdown() }
        let again = try TCPListener.listen(host: "127.0.0.1", port: port, on: other) { _ in }
        #expect(again.localPort == port)
    }

    @Test func listenerIsReleasedOnceClosed() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        weak var weakListener: TCPListener?
        do {
            let listener = try startEchoServer(on: loop)
            weakListener = listener
            listener.close()
        }
        #expect(weakListener == nil)
    }

    private func startListener(host: String, on loop: EventLoop) throws -> TCPListener {
        try TCPListener.listen(host: host, port: 0, on: loop) { connection in
            connection.startReading { bytes in
                connection.enqueue(bytes)
                return bytes.count
            }
        }
    }
}

@Suite("TCPListener out of descriptors")
struct TCPListenerDescriptorExhaustionTests {
    /// In a child process (it lowers the descriptor limit): with no descriptor left, accept
    /// fails with EMFILE; the listener pauses for its backoff instead of spinning on the readable
    /// socket, and accepts the waiting connections once descriptors are free again.
    @Test func runningOutOfDescriptorsPausesAcceptingAndResumesLater() async {
        await #expect(processExitsWith: .success) {
            let loop = EventLoop()
            let accepted = LoopBox(0)
            let listener = try! TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in accepted.value += 1 }
            var clients: [Int32] = []
            for _ in 0..<3 {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                address.sin_port = listener.localPort.bigEndian
                let status = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard status == 0 else { exit(10) }
                clients.append(fd)
            }
            let exhaustion = DescriptorExhaustion()
            guard exhaustion.isExhausted else { exit(11) }
            let started = ContinuousClock.now
            _ = loop.run(until: loop.sleep(for: .milliseconds(350)))
            let ran = ContinuousClock.now - started
            // Level-triggered readiness would have failed thousands of times; the backoff allows
            // about one failure per 100 ms of the time the loop actually ran (a loaded machine
            // may stretch its sleep), plus a few.
            // Not all: (the test harness's own threads in this process may free a descriptor
            // meanwhile, which lets one connection through).
            guard accepted.value < 3 else { exit(12) }
            let allowed = Int(ran / .milliseconds(100)) + 5
            guard (1...allowed).contains(listener.resourceFailures) else {
                exit(Int32(100 + min(listener.resourceFailures, 100)))
            }
            exhaustion.release()
            // Until all three are in (the backoff's next retry accepts them), within the drive's
            // generous limit rather than a fixed window a loaded machine may not meet.
            guard drive(loop, until: { accepted.value == 3 }) else { exit(13) }
            loop.shutdown()
            // `_exit`, not `exit`: under AddressSanitizer, `exit` runs LeakSanitizer's check while
            // this child's objects are still alive, and LeakSanitizer reports the weak-reference
            // side table of one of them as a 32-byte leak (the object's refcount word holds the
            // side table's address encoded, which LeakSanitizer cannot recognise as a pointer).
            _exit(0)
        }
    }
}
