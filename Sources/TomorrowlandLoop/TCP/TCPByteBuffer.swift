#if canImport(Glibc)
    import Glibc
#endif

/// A growable byte queue with contiguous readable bytes: the input and output buffers of a
/// ``TCPConnection``.
///
/// Bytes are appended at the writer index and consumed at the reader index; the readable region
/// is always one contiguous block, so a streaming parser sees all buffered input at once and
/// `send` takes the whole pending output in one call. Space is reclaimed by moving the readable
/// bytes to the front when the free tail is too small.
///
/// Loop-confined (owned by one connection); not thread-safe. The regions it hands out are valid
/// until its next mutation: LoopInvariants: "Byte buffer regions".
final class TCPByteBuffer {
    /// Capacity kept when the buffer empties; larger storage is freed then, so that a connection
    /// that once buffered a large burst does not keep the memory while idle.
    static let retainedCapacity = 16 * 1024

    /// Owned: allocated here, freed by `deinit` or when the buffer shrinks. `nil` only while
    /// `capacity` and both indices are 0 (asserted by `reserveWritable(_:)`).
    private var storage: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    private var readerIndex = 0
    private var writerIndex = 0

    init() {}

    deinit {
        storage?.deallocate()
    }

    /// How many bytes are buffered.
    var readableBytes: Int { writerIndex - readerIndex }

    /// The buffered bytes, valid until the next mutation.
    var readableRegion: UnsafeRawBufferPointer {
        guard let storage else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: storage + readerIndex, count: readableBytes)
    }

    /// Makes room for at least `count` more bytes and returns the free tail (valid until the next
    /// mutation); fill it, then call ``commitWritten(_:)``.
    func reserveWritable(_ count: Int) -> UnsafeMutableRawBufferPointer {
        // LoopInvariants: "Byte buffer regions": the `storage!` below rely on this.
        assert(
            storage != nil || (capacity == 0 && readerIndex == 0 && writerIndex == 0),
            "TCPByteBuffer: no storage, yet a capacity or buffered bytes")
        // `storage == nil`: an empty buffer has no storage yet, even for a zero-byte request
        // (found by the TCP input fuzzer).
        if capacity - writerIndex < count || storage == nil {
            let readable = readableBytes
            if readerIndex > 0 && capacity - readable >= count && readable <= capacity / 2 {
                // Compacting is cheaper than growing: the live bytes are at most half.
                if readable > 0 { memmove(storage!, storage! + readerIndex, readable) }
            } else {
                var newCapacity = Swift.max(capacity, 2048)
                while newCapacity - readable < count { newCapacity *= 2 }
                let newStorage = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
                if readable > 0 { newStorage.copyMemory(from: storage! + readerIndex, byteCount: readable) }
                storage?.deallocate()
                storage = newStorage
                capacity = newCapacity
            }
            readerIndex = 0
            writerIndex = readable
        }
        return UnsafeMutableRawBufferPointer(start: storage! + writerIndex, count: capacity - writerIndex)
    }

    /// Marks `count` bytes of the region ``reserveWritable(_:)`` returned as written.
    func commitWritten(_ count: Int) {
        precondition(count >= 0 && writerIndex + count <= capacity)
        writerIndex += count
    }

    /// Appends a copy of `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        let free = reserveWritable(bytes.count)
        free.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
        writerIndex += bytes.count
    }

    /// Appends a copy of `bytes`.
    func append(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done != nil { return }
        let count = bytes.count
        guard count > 0 else { return }
        let free = reserveWritable(count)
        var offset = 0
        for byte in bytes {
            free[offset] = byte
            offset += 1
        }
        writerIndex += count
    }

    /// Drops `count` bytes from the front.
    func consume(_ count: Int) {
        precondition(count >= 0 && count <= readableBytes, "consumed more bytes than are buffered")
        readerIndex += count
        if readerIndex == writerIndex {
            readerIndex = 0
            writerIndex = 0
            if capacity > Self.retainedCapacity {
                storage?.deallocate()
                storage = nil
                capacity = 0
            }
        }
    }

    /// Copies the first `count` bytes out and drops them.
    func take(_ count: Int) -> [UInt8] {
        let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: readableRegion.prefix(count)))
        consume(bytes.count)
        return bytes
    }

    /// The offset of the first occurrence of `delimiter` in the readable bytes at or after
    /// `start`, or nil.
    func firstIndex(of delimiter: [UInt8], from start: Int) -> Int? {
        let region = readableRegion
        let length = delimiter.count
        guard length > 0, region.count >= length else { return nil }
        let first = delimiter[0]
        var index = Swift.max(start, 0)
        let last = region.count - length
        while index <= last {
            guard let base = region.baseAddress,
                let hit = memchr(base + index, Int32(first), last - index + 1)
            else { return nil }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            var matches = true
            for position in 1..<length where region[offset + position] != delimiter[position] {
                matches = false
                break
            }
            if matches { return offset }
            index = offset + 1
        }
        return nil
    }
}
