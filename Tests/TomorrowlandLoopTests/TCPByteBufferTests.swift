import Testing

@testable import TomorrowlandLoop

/// The connection's byte queue (the fuzzer in Fuzz/TCPInputBufferFuzzer.swift covers it at
/// random; these are the cases it found).
@Suite("TCPByteBuffer")
struct TCPByteBufferTests {
    @Test func reservingZeroBytesInAnEmptyBufferGivesAnEmptyRegion() {
        let buffer = TCPByteBuffer()
        let free = buffer.reserveWritable(0)
        buffer.commitWritten(0)
        #expect(free.count >= 0)
        #expect(buffer.readableBytes == 0)
        buffer.append([1, 2, 3])
        #expect(Array(buffer.readableRegion) == [1, 2, 3])
    }
}
