import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("TCPConnection promise reads")
struct TCPConnectionReadingTests {
    /// A listener that hands its first accepted connection to the test, untouched.
    private func pair(
        _ loop: EventLoop, options: TCPConnectionOptions = .init()
    ) throws -> (
        client: TCPConnection, server: TCPConnection
    ) {
        let accepted = LoopBox<TCPConnection?>(nil)
        var listenerOptions = TCPListenerOptions()
        listenerOptions.connection = options
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop, options: listenerOptions) {
            accepted.value = $0
        }
        defer { listener.close() }
        let client = try #require(
            drive(
                loop,
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?.value)
        #expect(drive(loop) { accepted.value != nil })
        return (client, try #require(accepted.value))
    }

    @Test func readUpToADelimiterSplitAcrossSegments() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (client, server) = try pair(loop)
        let line = server.read(upTo: Array("\r\n".utf8), maxBytes: 100)
        _ = drive(loop, until: client.write(Array("GET /x HTTP\r".utf8)))
        #expect(drive(loop) { server.bufferedInputBytes == 12 })
        #expect(line.result == nil)
        _ = drive(loop, until: client.write(Array("\nHost: h\r\n".utf8)))
        #expect(drive(loop, until: line)?.value == Array("GET /x HTTP\r\n".utf8))
        // The rest stays buffered for the next read.
        #expect(
            drive(loop, until: server.read(upTo: Array("\r\n".utf8), maxBytes: 100))?.value == Array("Host: h\r\n".utf8)
        )
    }

    @Test func readUpToRejectsWhenTheDelimiterIsNotWithinMaxBytes() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (client, server) = try pair(loop)
        _ = drive(loop, until: client.write(Array("0123456789\n".utf8)))
        let tooLong = drive(loop, until: server.read(upTo: [10], maxBytes: 8))
        #expect(tooLong?.error == .inputLimitExceeded(limit: 8))
        // Nothing was consumed: a longer allowance finds the line.
        #expect(drive(loop, until: server.read(upTo: [10], maxBytes: 11))?.value == Array("0123456789\n".utf8))
    }

    @Test func readExactlyWaitsForTheWholeCount() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        var options = TCPConnectionOptions()
        options.maxInputBytes = 1024
        let (client, server) = try pair(loop, options: options)
        let payload = pattern(300_000)
        // Larger than maxInputBytes: the pending read raises the bound to its count.
        let read = server.read(exactly: payload.count)
        _ = client.write(payload[..<1000])
        #expect(drive(loop) { server.bufferedInputBytes == 1000 })
        #expect(read.result == nil)
        _ = client.write(payload[1000...])
        #expect(drive(loop, until: read)?.value == payload)
        #expect(drive(loop, until: server.read(exactly: 0))?.value == [])
    }

    @Test func readReturnsWhatIsAvailableUpToMaxBytes() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (client, server) = try pair(loop)
        _ = drive(loop, until: client.write(pattern(10)))
        // Without a pending read the socket is not read: the bytes wait in the kernel.
        _ = drive(loop, until: loop.sleep(for: .milliseconds(20)))
        #expect(server.bufferedInputBytes == 0)
        let first = drive(loop, until: server.read(maxBytes: 4))
        #expect(first?.value == Array(pattern(10)[..<4]))
        let rest = drive(loop, until: server.read(maxBytes: 100))
        #expect(rest?.value == Array(pattern(10)[4...]))
    }

    @Test func endOfInputGivesAnEmptyReadAndRejectsIncompleteReads() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (client, server) = try pair(loop)
        _ = drive(loop, until: client.write(Array("abc".utf8)))
        client.shutdownOutput()
        // Bytes before the end are still delivered, then the end shows.
        #expect(drive(loop, until: server.read(exactly: 5))?.error == .endOfInput)
        #expect(drive(loop, until: server.read(upTo: [10], maxBytes: 10))?.error == .endOfInput)
        #expect(drive(loop, until: server.read())?.value == Array("abc".utf8))
        #expect(drive(loop, until: server.read())?.value == [])
        #expect(drive(loop, until: server.read())?.value == [])
        // Our side may still write after the peer's half-close.
        let reply = client.read(exactly: 2)
        _ = server.write(Array("ok".utf8))
        #expect(drive(loop, until: reply)?.value == Array("ok".utf8))
        // Both directions end: the connections close in order.
        server.shutdownOutput()
        #expect(drive(loop, until: client.read())?.value == [])
        #expect(drive(loop, until: server.closed)?.value == .some(nil))
        #expect(drive(loop, until: client.closed)?.value == .some(nil))
    }

    @Test func cancellingAPendingReadLeavesTheBytesForTheNextRead() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (client, server) = try pair(loop)
        let abandoned = server.read(exactly: 4)
        abandoned.requestCancel()
        #expect(drive(loop, until: abandoned)?.isCancelled == true)
        _ = drive(loop, until: client.write([1, 2, 3, 4]))
        #expect(drive(loop, until: server.read(exactly: 4))?.value == [1, 2, 3, 4])
    }

    @Test func readsFromAnotherThreadWhileTheLoopRuns() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let client = try #require(connectToEchoServer(onRunning: loop))
        let reply = client.write(Array("ping\n".utf8)).flatMap(on: .immediate) {
            client.read(upTo: [10], maxBytes: 10)
        }
        #expect(blockingResult(of: reply)?.value == Array("ping\n".utf8))
        // A read issued from this thread while the loop runs resolves too.
        let second = client.write(Array("pong\n".utf8)).flatMap(on: .immediate) { client.read(exactly: 5) }
        #expect(blockingResult(of: second)?.value == Array("pong\n".utf8))
        loop.shutdown()
        #expect(thread.join())
    }

    @Test func aSecondOutstandingReadIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let loop = EventLoop()
            let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
            let client = loop.run(
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10))
            ).value!
            _ = client.read()
            _ = client.read()
        }
    }

    @Test func promiseReadsAfterStartReadingAreAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let loop = EventLoop()
            let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
            let client = loop.run(
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10))
            ).value!
            client.startReading { $0.count }
            _ = client.read()
        }
    }
}
