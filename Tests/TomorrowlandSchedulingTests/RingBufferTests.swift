import Testing
import TomorrowlandScheduling

@Suite("RingBuffer")
struct RingBufferTests {
    private final class Item {}

    @Test func elementsComeOutInTheOrderTheyWentInAcrossWrappingAndGrowth() {
        var buffer = RingBuffer<Int>()
        defer { buffer.deallocate() }
        var expected: [Int] = []
        var next = 0
        // Interleave appends and removals so that the head wraps before the buffer grows (its
        // first capacity is 16), then grow it from a wrapped state twice.
        for round in 0..<6 {
            for _ in 0..<(10 * (round + 1)) {
                buffer.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(7 * (round + 1)) {
                #expect(buffer.removeFirst() == expected.removeFirst())
            }
            #expect(buffer.count == expected.count)
        }
        while !buffer.isEmpty { #expect(buffer.removeFirst() == expected.removeFirst()) }
        #expect(expected.isEmpty)
    }

    @Test func deallocateReleasesTheElementsStillQueued() {
        var buffer = RingBuffer<Item>()
        var released: [() -> Item?] = []
        // 20 appended and 5 removed: the live elements wrap around the end of a grown buffer.
        for _ in 0..<20 {
            let item = Item()
            released.append { [weak item] in item }
            buffer.append(item)
        }
        for _ in 0..<5 { _ = buffer.removeFirst() }
        #expect(released.prefix(5).allSatisfy { $0() == nil })
        #expect(released.dropFirst(5).allSatisfy { $0() != nil })
        buffer.deallocate()
        #expect(released.allSatisfy { $0() == nil })
        #expect(buffer.count == 0)
    }
}
