// libFuzzer harness for the command path (compiled by scripts/fuzz.sh with KeyValueCore's
// sources, except the loop-driven sweeper).
//
// Each input is a stream of requests run against a fresh store whose clock moves 7 ms per
// request (so expiry paths run too): every request that parses must get exactly one
// well-formed RESP reply, and the store's sweep must agree with its lazy expiry.

/// Virtual milliseconds, advanced by the harness. `@unchecked Sendable`: one thread.
private final class FuzzClock: @unchecked Sendable {
    var milliseconds: Int64 = 1_000_000
}

/// The length of the well-formed reply at `start`, or nil.
private func replyLength(_ bytes: [UInt8], at start: Int) -> Int? {
    guard start < bytes.count else { return nil }
    var lineEnd = start
    while lineEnd + 1 < bytes.count && !(bytes[lineEnd] == 13 && bytes[lineEnd + 1] == 10) { lineEnd += 1 }
    guard lineEnd + 1 < bytes.count else { return nil }
    let header = String(decoding: bytes[(start + 1)..<lineEnd], as: UTF8.self)
    let next = lineEnd + 2
    switch bytes[start] {
    case UInt8(ascii: "+"), UInt8(ascii: "-"):
        return next - start
    case UInt8(ascii: ":"):
        return Int(header) != nil ? next - start : nil
    case UInt8(ascii: "$"):
        guard let count = Int(header), count >= -1 else { return nil }
        if count == -1 { return next - start }
        guard next + count + 2 <= bytes.count, bytes[next + count] == 13, bytes[next + count + 1] == 10 else {
            return nil
        }
        return next + count + 2 - start
    case UInt8(ascii: "*"):
        guard let count = Int(header), count >= 0 else { return nil }
        var offset = next
        for _ in 0..<count {
            guard let length = replyLength(bytes, at: offset) else { return nil }
            offset += length
        }
        return offset - start
    default:
        return nil
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommands(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let clock = FuzzClock()
    let store = ShardedStore(
        shardCount: start[0] & 1 == 0 ? 1 : 4, clock: KeyValueClock { .milliseconds(clock.milliseconds) })
    let processor = CommandProcessor(store: store)
    var parser = RESPParser(maxRequestBytes: 4096)
    var writer = RESPReplyWriter()
    let input = UnsafeRawBufferPointer(start: start + 1, count: count - 1)
    var offset = 0
    var expectedReplies = 0
    loop: while offset < input.count {
        switch parser.parse(UnsafeRawBufferPointer(rebasing: input[offset...])) {
        case .command(let length):
            offset += length
            if parser.argumentCount > 0 { expectedReplies += 1 }
            clock.milliseconds += 7
            if processor.execute(parser, into: &writer) == .close { break loop }
            if expectedReplies % 8 == 0 {
                let before = store.count
                let removed = store.sweepExpired(budget: 3).removed
                precondition(store.count == before - removed, "sweep count mismatch")
            }
        case .incomplete, .failed:
            break loop
        }
    }
    var replies = 0
    var position = 0
    let bytes = writer.bytes
    while position < bytes.count {
        guard let length = replyLength(bytes, at: position) else {
            preconditionFailure(
                "malformed reply at \(position): \(String(decoding: bytes[position...], as: UTF8.self))")
        }
        position += length
        replies += 1
    }
    precondition(replies == expectedReplies, "\(expectedReplies) requests but \(replies) replies")
    return 0
}
