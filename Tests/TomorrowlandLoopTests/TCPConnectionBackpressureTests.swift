import Synchronization
import Testing
import Tomorrowland

@testable import TomorrowlandLoop

@Suite("TCPConnection backpressure")
struct TCPConnectionBackpressureTests {
    @Test func aWriterPacedByIsWritableKeepsPendingBytesBoundedUntilThePeerDrains() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let chunk = pattern(16 * 1024)
        let total = 16 << 20
        let highWaterMark = 64 * 1024
        let sent = LoopBox(0)
        let writableCalls = LoopBox(0)
        let largestPending = LoopBox(0)
        let server = LoopBox<TCPConnection?>(nil)
        var options = TCPListenerOptions()
        options.connection.writeHighWaterMark = highWaterMark
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop, options: options) { connection in
            server.value = connection
            func pump() {
                while connection.isWritable && sent.value < total {
                    connection.enqueue(chunk)
                    sent.value += chunk.count
                    largestPending.value = max(largestPending.value, connection.pendingOutputBytes)
                }
                if sent.value == total { connection.close(afterFlushing: true) }
            }
            connection.onWritable = {
                writableCalls.value += 1
                pump()
            }
            pump()
        }
        let client = try #require(
            drive(
                loop,
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?.value)
        // The client does not read: the server fills the kernel's buffers, then its own up to
        // the high-water mark, and stops.
        #expect(drive(loop) { server.value.map { !$0.isWritable } ?? false })
        _ = drive(loop, until: loop.sleep(for: .milliseconds(50)))
        #expect(sent.value < total)
        #expect(largestPending.value < highWaterMark + chunk.count)
        #expect(writableCalls.value == 0)
        // The peer drains: onWritable resumes the writer until everything went through.
        let everything = drive(loop, until: readToEnd(client))
        #expect(everything?.value?.count == total)
        #expect(
            everything?.value.map { Array($0[..<chunk.count]) == chunk && Array($0.suffix(chunk.count)) == chunk }
                == true)
        #expect(writableCalls.value > 0)
        #expect(largestPending.value < highWaterMark + chunk.count)
    }

    /// `onWritable` that queues more than the socket takes and then closes after flushing, called
    /// from a flush that had emptied the buffer: the close must wait for the new bytes. (It used
    /// to close at once, on the flush's stale "drained", dropping them; seen as a short read in
    /// the test above under AddressSanitizer.)
    @Test func closeAfterFlushingFromOnWritableSendsWhatItQueued() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let chunk = pattern(16 * 1024)
        let first = Array(chunk[..<4096])
        // 16 MiB: more than the kernel buffers on the loopback before the client reads.
        let rest = repeated(chunk, count: 1024)
        var options = TCPListenerOptions()
        options.connection.writeHighWaterMark = 1024
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop, options: options) { connection in
            connection.onWritable = {
                connection.onWritable = nil
                connection.enqueue(rest)
                connection.close(afterFlushing: true)
            }
            // Above the high-water mark, and sent at once: the flush that empties the buffer
            // calls onWritable.
            connection.enqueue(first)
        }
        let received = try Self.readEverything(from: listener, on: loop)
        #expect(received?.count == first.count + rest.count)
        // A Bool first: a failing #expect would print the 16 MiB it compared.
        let intact = isConcatenation(received, of: first, rest)
        #expect(intact, "the bytes arrived in order, none lost")
    }

    /// The same from a write promise's `.immediate` callback, run by the flush that sent the
    /// write's last bytes: the write waits behind 8 MiB the client has not read yet.
    @Test func closeAfterFlushingFromAWriteCallbackSendsWhatItQueued() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let chunk = pattern(16 * 1024)
        // 8 MiB each: more than the kernel buffers on the loopback (about 4 MB here).
        let head = repeated(chunk, count: 512)
        let first = Array(chunk[..<4096])
        let rest = repeated(chunk, count: 512)
        let writeWaited = LoopBox(false)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            connection.enqueue(head)
            let written = connection.write(first)
            writeWaited.value = written.result == nil
            _ = written.map(on: .immediate) {
                connection.enqueue(rest)
                connection.close(afterFlushing: true)
            }
        }
        let received = try Self.readEverything(from: listener, on: loop)
        #expect(writeWaited.value, "the write waited for the client to read")
        #expect(received?.count == head.count + first.count + rest.count)
        let intact = isConcatenation(received, of: head, first, rest)
        #expect(intact, "the bytes arrived in order, none lost")
    }

    /// Connects a client to `listener` and reads until the server closes; nil if that failed.
    static func readEverything(from listener: TCPListener, on loop: EventLoop) throws -> [UInt8]? {
        let client = try #require(
            drive(
                loop,
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?.value)
        return drive(loop, until: readToEnd(client))?.value
    }

    @Test func writePromisesResolveInOrderAsTheBytesLeave() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let listener = try startEchoServer(on: loop)
        let client = try #require(
            drive(
                loop,
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: listener.localPort, on: loop, timeout: .seconds(10)))?.value)
        let order = LoopBox<[Int]>([])
        let writes = (0..<20).map { index in
            client.write(pattern(100_000, seed: index)).map(on: .immediate) { order.value.append(index) }
        }
        let flushed = client.flush().map(on: .immediate) { order.value.append(99) }
        _ = drive(loop, until: when(fulfilled: writes + [flushed]))
        #expect(order.value == Array(0..<20) + [99])
        #expect(client.pendingOutputBytes == 0)
        #expect(client.isWritable)
    }
}
