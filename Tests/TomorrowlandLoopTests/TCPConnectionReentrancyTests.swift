import Testing
import Tomorrowland

@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Calls into a connection from inside its own callbacks: the cases the re-entrancy model test
/// (TCPConnectionModelTests) found, kept as focused tests.
@Suite("TCPConnection calls from inside its callbacks")
struct TCPConnectionReentrancyTests {
    /// A write past the high-water mark that the socket takes at once makes the connection
    /// writable again inside `write`: `onWritable` closing the connection there used to reject
    /// the write with `closed` although its bytes had been sent (its waiter was added after the
    /// send had run `onWritable`).
    @Test func aWriteWhoseBytesWereSentIsFulfilledWhenOnWritableClosesDuringIt() {
        let loop = EventLoop()
        defer { loop.shutdown() }
        var options = TCPConnectionOptions()
        options.writeHighWaterMark = 32
        let (connection, peer) = socketPairConnection(on: loop, options: options)
        defer { closeDescriptor(peer) }
        let writableCalls = LoopBox(0)
        connection.onWritable = {
            writableCalls.value += 1
            connection.close()
        }
        let payload = pattern(64)
        let written = connection.write(payload)
        loop.runUntilIdle()
        #expect(writableCalls.value == 1)
        #expect(written.result?.value != nil, "the bytes went out: \(String(describing: written.result))")
        #expect(connection.closed.result?.value == .some(nil))
        let received = readUntilEnd(from: peer, within: .seconds(5))
        #expect(received.bytes == payload)
        #expect(received.ended)
    }
}
