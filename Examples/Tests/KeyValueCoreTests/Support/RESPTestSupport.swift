import KeyValueCore

/// Encodes `arguments` as a multibulk request, as clients send it.
func multibulk(_ arguments: [String]) -> [UInt8] {
    var bytes = Array("*\(arguments.count)\r\n".utf8)
    for argument in arguments {
        bytes += Array("$\(argument.utf8.count)\r\n".utf8) + Array(argument.utf8) + [13, 10]
    }
    return bytes
}

/// What parsing `input` in full yields: each request's arguments as strings, then how it ended.
struct ParseOutcome: Equatable, CustomStringConvertible {
    var requests: [[String]] = []
    var consumed: [Int] = []
    var end: RESPParser.Step = .incomplete

    var description: String { "\(requests) consumed \(consumed) then \(end)" }
}

/// Parses `input` delivered in chunks of `chunkSize` bytes (or `firstChunk` bytes and then the
/// rest), the way reads arrive on a connection: unconsumed bytes stay at the front of the buffer
/// passed next.
func parse(
    _ input: [UInt8], chunkSize: Int? = nil, firstChunk: Int? = nil, maxRequestBytes: Int = 1 << 20
) -> ParseOutcome {
    var parser = RESPParser(maxRequestBytes: maxRequestBytes)
    var outcome = ParseOutcome()
    var buffer: [UInt8] = []
    var next = 0
    let chunk = chunkSize ?? max(input.count, 1)
    while true {
        let step = buffer.withUnsafeBytes { parser.parse($0) }
        switch step {
        case .command(let consumed):
            outcome.requests.append(
                (0..<parser.argumentCount).map { String(decoding: parser.argument($0), as: UTF8.self) })
            outcome.consumed.append(consumed)
            buffer.removeFirst(consumed)
        case .incomplete:
            guard next < input.count else {
                outcome.end = .incomplete
                return outcome
            }
            let end = min(input.count, next == 0 ? (firstChunk ?? chunk) : next + chunk)
            buffer += input[next..<end]
            next = end
        case .failed:
            outcome.end = step
            return outcome
        }
    }
}

/// A store on `clock` with a processor, and a way to send it requests and read the replies as text.
final class CommandHarness {
    let store: ShardedStore
    let processor: CommandProcessor
    var parser = RESPParser(maxRequestBytes: 1 << 20)

    init(clock: KeyValueClock = .monotonic, shards: Int = 1) {
        store = ShardedStore(shardCount: shards, clock: clock)
        processor = CommandProcessor(store: store)
    }

    /// The reply to one request, RESP-encoded, as text.
    @discardableResult
    func send(_ arguments: String...) -> String {
        sendWithOutcome(arguments).reply
    }

    func sendWithOutcome(_ arguments: [String]) -> (reply: String, outcome: CommandProcessor.Outcome) {
        let request = multibulk(arguments)
        var writer = RESPReplyWriter()
        let outcome = request.withUnsafeBytes { bytes -> CommandProcessor.Outcome in
            guard case .command = parser.parse(bytes) else { fatalError("test request did not parse") }
            return processor.execute(parser, into: &writer)
        }
        return (String(decoding: writer.bytes, as: UTF8.self), outcome)
    }
}
