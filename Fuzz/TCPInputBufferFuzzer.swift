// libFuzzer harness for the input side of TCPConnection's read paths (compiled by
// scripts/fuzz.sh with Sources/TomorrowlandLoop/TCP/TCPByteBuffer.swift alone:
// swiftc -sanitize=fuzzer,address).
//
// The input is a program of buffer operations, the ones a connection performs: socket reads
// landing through `reserveWritable`/`commitWritten` or `append` (chunks of any size, which makes
// the buffer grow, compact and shrink), a streaming handler consuming a prefix, `read(exactly:)`
// taking a prefix, and `read(upTo:maxBytes:)`, whose delimiter search resumes where the last one
// stopped as more input arrives. A plain array is the reference: after every step the buffered
// bytes must equal it, and every delimiter search must find the first occurrence a naive scan of
// the whole input finds.

/// The input, read a byte at a time.
private struct Program {
    let bytes: [UInt8]
    var cursor = 0

    mutating func next() -> UInt8? {
        guard cursor < bytes.count else { return nil }
        defer { cursor += 1 }
        return bytes[cursor]
    }

    /// `count` bytes of data, cycling through the input (so that long chunks are cheap to encode).
    func data(_ count: Int, salt: Int) -> [UInt8] {
        guard !bytes.isEmpty else { return [UInt8](repeating: 0, count: count) }
        return (0..<count).map { bytes[(salt + $0) % bytes.count] }
    }
}

/// The first offset of `delimiter` in `haystack`, the obvious way.
private func naiveFirstIndex(of delimiter: [UInt8], in haystack: [UInt8]) -> Int? {
    guard !delimiter.isEmpty, haystack.count >= delimiter.count else { return nil }
    for start in 0...(haystack.count - delimiter.count)
    where Array(haystack[start..<(start + delimiter.count)]) == delimiter {
        return start
    }
    return nil
}

/// A `read(upTo:maxBytes:)` waiting for more input.
private struct PendingDelimiterRead {
    let delimiter: [UInt8]
    let maxBytes: Int
    /// How far the search already looked (TCPConnection's `PendingRead.scanned`).
    var scanned = 0
}

private func check(_ buffer: TCPByteBuffer, _ model: [UInt8]) {
    precondition(buffer.readableBytes == model.count, "buffered count differs from the reference")
    precondition(Array(buffer.readableRegion) == model, "buffered bytes differ from the reference")
}

/// Tries to complete `read` as TCPConnection does; returns nil when it completed.
private func attempt(
    _ read: PendingDelimiterRead, _ buffer: TCPByteBuffer, _ model: inout [UInt8]
) -> PendingDelimiterRead? {
    let start = max(0, read.scanned - read.delimiter.count + 1)
    let found = buffer.firstIndex(of: read.delimiter, from: start)
    precondition(found == naiveFirstIndex(of: read.delimiter, in: model), "delimiter search disagrees")
    if let index = found, index + read.delimiter.count <= read.maxBytes {
        let taken = buffer.take(index + read.delimiter.count)
        precondition(taken == Array(model.prefix(taken.count)), "read(upTo:) returned other bytes")
        model.removeFirst(taken.count)
        return nil
    }
    if buffer.readableBytes >= read.maxBytes { return nil }  // rejected: inputLimitExceeded
    var waiting = read
    waiting.scanned = buffer.readableBytes
    return waiting
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTCPInputBuffer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var program = Program(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let buffer = TCPByteBuffer()
    var model: [UInt8] = []
    var pending: PendingDelimiterRead?
    while let operation = program.next() {
        let argument = Int(program.next() ?? 0)
        switch operation % 5 {
        case 0, 1:
            // Socket input: small chunks, or large ones (up to ~20 KiB) that force growth.
            let count = operation & 0x20 == 0 ? argument : argument * 83
            let chunk = program.data(count, salt: program.cursor)
            if operation % 5 == 0 {
                let free = buffer.reserveWritable(count)
                precondition(free.count >= count, "reserveWritable returned too little room")
                free.copyBytes(from: chunk)
                buffer.commitWritten(count)
            } else {
                buffer.append(chunk)
            }
            model += chunk
            if let read = pending { pending = attempt(read, buffer, &model) }
        case 2:
            // A streaming handler consumes a prefix (never while a promise read is pending).
            guard pending == nil else { break }
            let count = min(argument * (operation & 0x20 == 0 ? 1 : 97), model.count)
            buffer.consume(count)
            model.removeFirst(count)
        case 3:
            // read(exactly:)
            guard pending == nil else { break }
            let count = argument * (operation & 0x20 == 0 ? 1 : 61)
            if model.count >= count {
                let taken = buffer.take(count)
                precondition(taken == Array(model.prefix(count)), "read(exactly:) returned other bytes")
                model.removeFirst(count)
            }
        default:
            // read(upTo:maxBytes:) with a 1-to-4-byte delimiter drawn from the input.
            guard pending == nil else { break }
            let length = 1 + (argument & 3)
            let delimiter = program.data(length, salt: argument)
            let maxBytes = max(length, Int(program.next() ?? 255) * 64)
            pending = attempt(PendingDelimiterRead(delimiter: delimiter, maxBytes: maxBytes), buffer, &model)
        }
        check(buffer, model)
    }
    return 0
}
