import KeyValueCore
import Testing

struct RESPReplyWriterTests {
    private func encoded(_ body: (inout RESPReplyWriter) -> Void) -> String {
        var writer = RESPReplyWriter()
        body(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func encodesEachReplyKind() {
        #expect(encoded { $0.ok() } == "+OK\r\n")
        #expect(encoded { $0.simpleString("PONG") } == "+PONG\r\n")
        #expect(encoded { $0.error("ERR bad\r\nthing") } == "-ERR bad  thing\r\n")
        #expect(encoded { $0.bulk("héllo") } == "$6\r\nhéllo\r\n")
        #expect(encoded { $0.bulk([UInt8]()) } == "$0\r\n\r\n")
        #expect(encoded { $0.null() } == "$-1\r\n")
        #expect(encoded { $0.arrayHeader(2) } == "*2\r\n")
    }

    @Test(arguments: [0, 7, 10, 42, -1, -10, 1_234_567_890, Int.max, Int.min])
    func encodesIntegersInDecimal(value: Int) {
        #expect(encoded { $0.integer(value) } == ":\(value)\r\n")
    }

    @Test func appendsRepliesInOrderAndClearsKeepingNothing() {
        var writer = RESPReplyWriter()
        writer.ok()
        writer.integer(3)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "+OK\r\n:3\r\n")
        writer.removeAll()
        #expect(writer.bytes.isEmpty)
    }

    @Test func keepsItsStorageOnlyUpToTheLimitGiven() {
        var writer = RESPReplyWriter(capacity: 0)
        writer.ok()
        let small = writer.bytes.capacity
        writer.removeAll(keepingCapacityUpTo: 4096)
        #expect(writer.bytes.isEmpty)
        #expect(writer.bytes.capacity == small)

        writer.bulk([UInt8](repeating: 7, count: 10_000))
        #expect(writer.bytes.capacity > 4096)
        writer.removeAll(keepingCapacityUpTo: 4096)
        #expect(writer.bytes.isEmpty)
        #expect(writer.bytes.capacity == 0)
    }

    @Test func keepsBinaryBulkBytes() {
        var writer = RESPReplyWriter()
        writer.bulk([0, 255, 13, 10])
        #expect(writer.bytes == Array("$4\r\n".utf8) + [0, 255, 13, 10, 13, 10])
    }
}
