import KeyValueCore
import Testing

struct RESPParserTests {
    @Test func parsesAMultibulkRequest() {
        let input = multibulk(["SET", "key", "value"])
        let outcome = parse(input)
        #expect(outcome.requests == [["SET", "key", "value"]])
        #expect(outcome.consumed == [input.count])
        #expect(outcome.end == .incomplete)
    }

    @Test func parsesEveryPipelinedRequestInOrder() {
        let input =
            multibulk(["GET", "a"]) + multibulk(["PING"]) + Array("PING\r\n".utf8) + multibulk(["DEL", "a", "b"])
        let outcome = parse(input)
        #expect(outcome.requests == [["GET", "a"], ["PING"], ["PING"], ["DEL", "a", "b"]])
        #expect(outcome.consumed.reduce(0, +) == input.count)
    }

    @Test func givesTheSameRequestsWhenTheInputIsSplitAtEveryOffset() {
        let input =
            multibulk(["SET", "k", "a value with\r\ninside"]) + Array("ECHO \"x\\x41\" 'y'\r\n".utf8)
            + multibulk(["GET", ""]) + Array("*0\r\n".utf8) + multibulk(["INCR", "counter"])
        let whole = parse(input)
        #expect(whole.requests.count == 5)
        for split in 1..<input.count {
            #expect(parse(input, firstChunk: split) == whole, "split at \(split)")
            #expect(parse(input, chunkSize: split) == whole, "chunks of \(split)")
        }
    }

    @Test func keepsBinaryArgumentsIntact() {
        let value: [UInt8] = [0, 13, 10, 255, 42]
        var input = Array("*2\r\n$4\r\nECHO\r\n$5\r\n".utf8)
        input += value + [13, 10]
        var parser = RESPParser(maxRequestBytes: 1024)
        input.withUnsafeBytes { bytes in
            #expect(parser.parse(bytes) == .command(consumed: input.count))
            #expect(Array(parser.argument(1)) == value)
        }
    }

    @Test func parsesInlineRequestsWithQuotesAndEscapes() {
        let outcome = parse(Array("  set  \"a b\\n\\x41\"  'it\\'s'\tplain\r\nPING\n".utf8))
        #expect(outcome.requests == [["set", "a b\nA", "it's", "plain"], ["PING"]])
    }

    @Test func anEmptyRequestHasNoArguments() {
        let outcome = parse(Array("*0\r\n*-1\r\n\r\n".utf8))
        #expect(outcome.requests == [[], [], []])
    }

    @Test(
        arguments: [
            ("*x\r\n", RESPProtocolError.invalidMultibulkLength),
            ("*-2\r\n", .invalidMultibulkLength),
            ("*1\r\n$x\r\n", .invalidBulkLength),
            ("*1\r\n$-1\r\n", .invalidBulkLength),
            ("*1\r\n:1\r\n", .expectedBulk(found: UInt8(ascii: ":"))),
            ("*1\r\n$1\r\nab\r\n", .missingBulkTerminator),
            ("*1\r\n$1\r\n", nil),
            ("*1\r\n$\r\n", .invalidBulkLength),
            ("*1\r\r\n", .invalidMultibulkLength),
            ("*2000000\r\n", .invalidMultibulkLength),
            ("ECHO \"unterminated\r\n", .unbalancedQuotes),
            ("ECHO \"a\"b\r\n", .unbalancedQuotes),
            ("*11111111111111111111111111111111111\r\n", .invalidMultibulkLength),
        ] as [(String, RESPProtocolError?)])
    func refusesMalformedInput(input: String, error: RESPProtocolError?) {
        let outcome = parse(Array(input.utf8))
        #expect(outcome.requests.isEmpty)
        #expect(outcome.end == (error.map { .failed($0) } ?? .incomplete))
    }

    @Test func refusesABulkLargerThanTheLimitBeforeItsBodyArrives() {
        let outcome = parse(Array("*2\r\n$3\r\nSET\r\n$2000\r\n".utf8), maxRequestBytes: 1000)
        #expect(outcome.end == .failed(.requestTooLarge(limit: 1000)))
    }

    @Test func refusesARequestWhoseArgumentsTogetherExceedTheLimit() {
        let input = multibulk(Array(repeating: String(repeating: "x", count: 90), count: 12))
        #expect(parse(input, maxRequestBytes: 1000).end == .failed(.requestTooLarge(limit: 1000)))
        #expect(parse(input, maxRequestBytes: 2000).requests.count == 1)
    }

    @Test func refusesAnArgumentCountThatCannotFitTheLimit() {
        #expect(parse(Array("*500\r\n".utf8), maxRequestBytes: 1000).end == .failed(.requestTooLarge(limit: 1000)))
    }

    @Test func refusesAnInlineLineLongerThanTheLimit() {
        let input = Array(String(repeating: "a", count: 200).utf8)
        #expect(parse(input, maxRequestBytes: 100).end == .failed(.inlineRequestTooLong))
        #expect(parse(input, maxRequestBytes: 1000).end == .incomplete)
    }

    @Test func resetForgetsAPartialRequest() {
        var parser = RESPParser(maxRequestBytes: 1024)
        let partial = Array("*2\r\n$3\r\nGET\r\n".utf8)
        partial.withUnsafeBytes { #expect(parser.parse($0) == .incomplete) }
        parser.reset()
        let ping = Array("PING\r\n".utf8)
        ping.withUnsafeBytes { #expect(parser.parse($0) == .command(consumed: 6)) }
        #expect(parser.argumentCount == 1)
    }

    @Test func protocolErrorReasonsUseRedisWording() {
        #expect(RESPProtocolError.invalidMultibulkLength.reason == "invalid multibulk length")
        #expect(RESPProtocolError.invalidBulkLength.reason == "invalid bulk length")
        #expect(RESPProtocolError.expectedBulk(found: 0x3a).reason == "expected '$', got ':'")
        #expect(RESPProtocolError.unbalancedQuotes.reason == "unbalanced quotes in request")
    }
}
