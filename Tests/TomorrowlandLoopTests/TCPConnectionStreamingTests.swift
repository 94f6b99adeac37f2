import Glibc
import Testing
import Tomorrowland

@testable import TomorrowlandLoop

@Suite("TCPConnection streaming input and server output")
struct TCPConnectionStreamingTests {
    private func connect(_ loop: EventLoop, _ port: UInt16) throws -> TCPConnection {
        try #require(
            drive(loop, until: TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10)))?
                .value)
    }

    @Test func anEchoServerSendsBackWhatItReceives() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let client = try connect(loop, listener.localPort)
        let message = Array("hello, loop\r\n".utf8)
        let reply = drive(
            loop, until: client.write(message).flatMap(on: .immediate) { client.read(exactly: message.count) })
        #expect(reply?.value == message)
    }

    @Test func oneMebibyteTravelsBothWays() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let client = try connect(loop, listener.localPort)
        let payload = pattern(1 << 20)
        let written = client.write(payload)
        let reply = drive(loop, until: client.read(exactly: payload.count))
        #expect(reply?.value?.count == payload.count)
        #expect(reply?.value == payload)
        #expect(written.result?.value != nil)
    }

    @Test func unconsumedInputIsPassedAgainWithTheNextBytes() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let lines = LoopBox<[String]>([])
        let calls = LoopBox<[Int]>([])
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            connection.startReading { bytes in
                calls.value.append(bytes.count)
                // Consume complete lines only; a partial line stays buffered.
                var consumed = 0
                while let newline = bytes[consumed...].firstIndex(of: UInt8(ascii: "\n")) {
                    lines.value.append(String(decoding: bytes[consumed..<newline], as: UTF8.self))
                    consumed = newline + 1
                }
                return consumed
            }
        }
        let client = try connect(loop, listener.localPort)
        _ = drive(loop, until: client.write(Array("first\nsec".utf8)))
        #expect(drive(loop) { calls.value.count == 1 })
        #expect(lines.value == ["first"])
        _ = drive(loop, until: client.write(Array("ond\n".utf8)))
        #expect(drive(loop) { lines.value.count == 2 })
        #expect(lines.value == ["first", "second"])
        // The second call saw the kept "sec" plus the new bytes.
        #expect(calls.value == [9, 7])
    }

    @Test func inputPastTheLimitClosesWithInputLimitExceeded() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        var options = TCPListenerOptions()
        options.connection.maxInputBytes = 16
        let serverClosed = LoopBox<Promise<TCPError?, NoError>?>(nil)
        let largestSeen = LoopBox(0)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop, options: options) { connection in
            serverClosed.value = connection.closed
            connection.startReading { bytes in
                largestSeen.value = max(largestSeen.value, bytes.count)
                return 0
            }
        }
        let client = try connect(loop, listener.localPort)
        _ = client.write(pattern(1000))
        #expect(drive(loop) { serverClosed.value != nil })
        let reason = drive(loop, until: try #require(serverClosed.value))
        #expect(reason?.value == .some(.inputLimitExceeded(limit: 16)))
        // The buffer never held more than one byte past the limit (the handler sees that byte and
        // could still consume it before the limit is enforced).
        #expect(largestSeen.value == 17)
        // The client sees the connection go away.
        let end = drive(loop, until: readToEnd(client))
        #expect(end?.value == [] || end?.error == .connectionReset)
    }

    @Test func peerEndOfInputClosesAfterFlushingWhenNoOneListensForIt() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let serverClosed = LoopBox<Promise<TCPError?, NoError>?>(nil)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            serverClosed.value = connection.closed
            connection.startReading { bytes in
                connection.enqueue(bytes)
                return bytes.count
            }
        }
        let client = try connect(loop, listener.localPort)
        client.enqueue(Array("last words".utf8))
        client.shutdownOutput()
        let everything = drive(loop, until: readToEnd(client))
        #expect(everything?.value == Array("last words".utf8))
        let reason = drive(loop, until: try #require(serverClosed.value))
        #expect(reason?.value == .some(nil))
        // Both directions ended and everything was read: the client closed too.
        #expect(drive(loop, until: client.closed)?.value == .some(nil))
    }

    @Test func onInputClosedKeepsTheConnectionHalfOpen() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            var received: [UInt8] = []
            connection.startReading { bytes in
                received += bytes
                return bytes.count
            }
            connection.onInputClosed = {
                // Still writable after the peer's half-close.
                connection.enqueue(Array("got \(received.count) bytes".utf8))
                connection.close(afterFlushing: true)
            }
        }
        let client = try connect(loop, listener.localPort)
        client.enqueue(pattern(5000))
        client.shutdownOutput()
        let reply = drive(loop, until: readToEnd(client))
        #expect(reply?.value == Array("got 5000 bytes".utf8))
    }

    @Test func stopReadingHoldsInputUntilResumed() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let received = LoopBox(0)
        let server = LoopBox<TCPConnection?>(nil)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            server.value = connection
            connection.startReading { bytes in
                received.value += bytes.count
                return bytes.count
            }
            connection.stopReading()
        }
        let client = try connect(loop, listener.localPort)
        _ = drive(loop, until: client.write(pattern(100)))
        // Accepted (waited for: a loaded machine may take longer than any fixed pause), then a
        // while for the bytes to arrive if reading were on.
        #expect(drive(loop) { server.value != nil })
        _ = drive(loop, until: loop.sleep(for: .milliseconds(50)))
        #expect(received.value == 0)
        loop.execute { server.value?.resumeReading() }
        #expect(drive(loop) { received.value == 100 })
    }

    @Test func aPeerResetClosesWithConnectionReset() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let serverClosed = LoopBox<Promise<TCPError?, NoError>?>(nil)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            serverClosed.value = connection.closed
            connection.startReading { $0.count }
        }
        let client = try connect(loop, listener.localPort)
        #expect(drive(loop) { serverClosed.value != nil })
        // SO_LINGER with a zero timeout makes close() send a reset.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        client.close()
        let reason = drive(loop, until: try #require(serverClosed.value))
        #expect(reason?.value == .some(.connectionReset))
    }

    @Test func writingToAResetPeerRejectsInsteadOfRaisingSIGPIPE() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let server = LoopBox<TCPConnection?>(nil)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            server.value = connection
        }
        let client = try connect(loop, listener.localPort)
        #expect(drive(loop) { server.value != nil })
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        client.close()
        _ = drive(loop, until: loop.sleep(for: .milliseconds(20)))
        // The server never reads, so it learns of the reset from send(): EPIPE or ECONNRESET.
        let connection = try #require(server.value)
        let first = drive(loop, until: connection.write(pattern(10)))
        let second = drive(loop, until: connection.write(pattern(10)))
        #expect(first?.error == .connectionReset || second?.error == .connectionReset || second?.error == .closed)
        #expect(drive(loop, until: connection.closed)?.value == .some(.connectionReset))
    }

    @Test func fiveHundredConcurrentConnectionsAllEcho() throws {
        // The clients and their server sides are open at once, and tests running in parallel hold
        // descriptors too: under a soft limit of 1,024 (a common default) some connects failed
        // with EMFILE. A hard limit too low for 500 (with 512 to spare) makes it fewer.
        let limit = raiseDescriptorLimit(to: 4096)
        let count = min(500, (limit - 512) / 2)
        try #require(count >= 100, "a descriptor limit of \(limit) leaves too few for this test")
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let exchanges = (0..<count).map { index -> Promise<Bool, TCPError> in
            let message = Array("client \(index)\n".utf8)
            return TCPConnection.connect(
                host: "127.0.0.1", port: listener.localPort, on: loop, timeout: tcpTestTimeLimit
            )
            .flatMap(on: .immediate) { client in
                client.write(message).flatMap(on: .immediate) { client.read(upTo: [10], maxBytes: 64) }
                    .map(on: .immediate) { reply in
                        client.close()
                        return reply == message
                    }
            }
        }
        // Every exchange, to its end (a failed one does not stop the others): what each ended
        // with, by outcome.
        #expect(drive(loop) { exchanges.allSatisfy { $0.result != nil } })
        var outcomes: [String: Int] = [:]
        for exchange in exchanges {
            let outcome: String
            switch exchange.result {
            case .value(true): outcome = "echoed"
            case .value(false): outcome = "wrong reply"
            case .error(let error): outcome = "\(error)"
            case .cancelled: outcome = "cancelled"
            case nil: outcome = "pending"
            }
            outcomes[outcome, default: 0] += 1
        }
        #expect(outcomes == ["echoed": count])
        // Every client closed; the server sides see end of input and close themselves.
        #expect(drive(loop) { loop.resources.count == 1 })
    }
}
