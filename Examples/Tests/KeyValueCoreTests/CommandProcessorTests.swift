import KeyValueCore
import Testing
import TomorrowlandTesting

struct CommandProcessorTests {
    let loop = TestLoop()
    let kv: CommandHarness

    init() {
        let loop = self.loop
        kv = CommandHarness(clock: KeyValueClock { loop.now })
    }

    @Test func pingAndEcho() {
        #expect(kv.send("PING") == "+PONG\r\n")
        #expect(kv.send("ping", "hi") == "$2\r\nhi\r\n")
        #expect(kv.send("PING", "a", "b") == "-ERR wrong number of arguments for 'ping' command\r\n")
        #expect(kv.send("ECHO", "hello world") == "$11\r\nhello world\r\n")
        #expect(kv.send("ECHO") == "-ERR wrong number of arguments for 'echo' command\r\n")
    }

    @Test func setThenGet() {
        #expect(kv.send("GET", "k") == "$-1\r\n")
        #expect(kv.send("SET", "k", "v1") == "+OK\r\n")
        #expect(kv.send("get", "k") == "$2\r\nv1\r\n")
        #expect(kv.send("SET", "k", "") == "+OK\r\n")
        #expect(kv.send("GET", "k") == "$0\r\n\r\n")
        #expect(kv.send("GET") == "-ERR wrong number of arguments for 'get' command\r\n")
        #expect(kv.send("SET", "k") == "-ERR wrong number of arguments for 'set' command\r\n")
    }

    @Test func setNXOnlySetsAMissingKey() {
        #expect(kv.send("SET", "k", "a", "NX") == "+OK\r\n")
        #expect(kv.send("SET", "k", "b", "nx") == "$-1\r\n")
        #expect(kv.send("GET", "k") == "$1\r\na\r\n")
    }

    @Test func setXXOnlyReplacesAnExistingKey() {
        #expect(kv.send("SET", "k", "a", "XX") == "$-1\r\n")
        #expect(kv.send("GET", "k") == "$-1\r\n")
        kv.send("SET", "k", "a")
        #expect(kv.send("SET", "k", "b", "XX") == "+OK\r\n")
        #expect(kv.send("GET", "k") == "$1\r\nb\r\n")
    }

    @Test func setRefusesBadOptions() {
        #expect(kv.send("SET", "k", "v", "NX", "XX") == "-ERR syntax error\r\n")
        #expect(kv.send("SET", "k", "v", "EX", "1", "PX", "5") == "-ERR syntax error\r\n")
        #expect(kv.send("SET", "k", "v", "BOGUS") == "-ERR syntax error\r\n")
        #expect(kv.send("SET", "k", "v", "EX") == "-ERR syntax error\r\n")
        #expect(kv.send("SET", "k", "v", "EX", "ten") == "-ERR value is not an integer or out of range\r\n")
        #expect(kv.send("SET", "k", "v", "EX", "0") == "-ERR invalid expire time in 'set' command\r\n")
        #expect(kv.send("SET", "k", "v", "PX", "-5") == "-ERR invalid expire time in 'set' command\r\n")
        #expect(
            kv.send("SET", "k", "v", "EX", "9223372036854775807") == "-ERR invalid expire time in 'set' command\r\n")
        #expect(kv.send("EXISTS", "k") == ":0\r\n")
    }

    @Test func setGetReturnsTheOldValue() {
        #expect(kv.send("SET", "k", "a", "GET") == "$-1\r\n")
        #expect(kv.send("SET", "k", "b", "GET") == "$1\r\na\r\n")
        #expect(kv.send("GET", "k") == "$1\r\nb\r\n")
    }

    @Test func deleteAndExistsCountKeys() {
        kv.send("SET", "a", "1")
        kv.send("SET", "b", "2")
        #expect(kv.send("EXISTS", "a", "b", "c", "a") == ":3\r\n")
        #expect(kv.send("DEL", "a", "c") == ":1\r\n")
        #expect(kv.send("DEL", "a") == ":0\r\n")
        #expect(kv.send("EXISTS", "a") == ":0\r\n")
        #expect(kv.send("DEL") == "-ERR wrong number of arguments for 'del' command\r\n")
        #expect(kv.send("EXISTS") == "-ERR wrong number of arguments for 'exists' command\r\n")
    }

    @Test func incrementAndDecrement() {
        #expect(kv.send("INCR", "n") == ":1\r\n")
        #expect(kv.send("INCR", "n") == ":2\r\n")
        #expect(kv.send("DECR", "n") == ":1\r\n")
        #expect(kv.send("DECR", "m") == ":-1\r\n")
        #expect(kv.send("GET", "n") == "$1\r\n1\r\n")
        kv.send("SET", "s", "abc")
        #expect(kv.send("INCR", "s") == "-ERR value is not an integer or out of range\r\n")
        kv.send("SET", "s", "007")
        #expect(kv.send("INCR", "s") == "-ERR value is not an integer or out of range\r\n")
        kv.send("SET", "max", "9223372036854775807")
        #expect(kv.send("INCR", "max") == "-ERR increment or decrement would overflow\r\n")
        kv.send("SET", "min", "-9223372036854775808")
        #expect(kv.send("DECR", "min") == "-ERR increment or decrement would overflow\r\n")
        #expect(kv.send("INCR") == "-ERR wrong number of arguments for 'incr' command\r\n")
    }

    @Test func incrementKeepsTheTimeToLive() {
        kv.send("SET", "n", "5", "EX", "10")
        #expect(kv.send("INCR", "n") == ":6\r\n")
        #expect(kv.send("TTL", "n") == ":10\r\n")
    }

    @Test func dbsizeAndFlushAll() {
        #expect(kv.send("DBSIZE") == ":0\r\n")
        kv.send("SET", "a", "1")
        kv.send("SET", "b", "1")
        #expect(kv.send("DBSIZE") == ":2\r\n")
        #expect(kv.send("FLUSHALL") == "+OK\r\n")
        #expect(kv.send("DBSIZE") == ":0\r\n")
        #expect(kv.send("FLUSHALL", "ASYNC") == "+OK\r\n")
        #expect(kv.send("FLUSHALL", "NOW") == "-ERR syntax error\r\n")
        #expect(kv.send("DBSIZE", "x") == "-ERR wrong number of arguments for 'dbsize' command\r\n")
    }

    @Test func quitRepliesOKAndAsksToClose() {
        let (reply, outcome) = kv.sendWithOutcome(["QUIT"])
        #expect(reply == "+OK\r\n")
        #expect(outcome == .close)
        #expect(kv.sendWithOutcome(["PING"]).outcome == .proceed)
    }

    @Test func unknownCommandsGetRedisError() {
        #expect(
            kv.send("FOO", "a", "b") == "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n")
        #expect(kv.send("GETX") == "-ERR unknown command 'GETX', with args beginning with: \r\n")
    }

    @Test func infoCommandAndConfigAnswerWhatClientsAsk() {
        let info = kv.send("INFO")
        #expect(info.hasPrefix("$"))
        #expect(info.contains("redis_version:"))
        #expect(kv.send("COMMAND", "COUNT") == ":20\r\n")
        #expect(kv.send("COMMAND", "DOCS") == "*0\r\n")
        #expect(kv.send("COMMAND").hasPrefix("*20\r\n"))
        #expect(kv.send("CONFIG", "GET", "save") == "*2\r\n$4\r\nsave\r\n$0\r\n\r\n")
        #expect(kv.send("CONFIG", "GET", "appendonly") == "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n")
        #expect(kv.send("CONFIG", "GET", "maxmemory") == "*0\r\n")
        #expect(kv.send("SELECT", "0") == "+OK\r\n")
        #expect(kv.send("SELECT", "1") == "-ERR DB index is out of range\r\n")
        #expect(kv.send("CLIENT", "SETNAME", "x") == "+OK\r\n")
    }

    @Test func keysAreSharedAcrossShards() {
        let sharded = CommandHarness(shards: 8)
        for index in 0..<100 { sharded.send("SET", "key\(index)", "\(index)") }
        #expect(sharded.send("DBSIZE") == ":100\r\n")
        #expect(sharded.send("GET", "key42") == "$2\r\n42\r\n")
        #expect(sharded.send("DEL", "key1", "key2", "key3", "nope") == ":3\r\n")
        #expect(sharded.send("DBSIZE") == ":97\r\n")
        sharded.send("FLUSHALL")
        #expect(sharded.send("DBSIZE") == ":0\r\n")
    }
}

struct CommandProcessorBatchTests {
    let harness = CommandHarness()

    private func run(_ input: [UInt8], budget: Int = .max) -> (String, Int, CommandProcessor.BatchEnding) {
        var parser = RESPParser(maxRequestBytes: 1024)
        var writer = RESPReplyWriter()
        let (consumed, ending) = input.withUnsafeBytes {
            harness.processor.executeAll($0, parser: &parser, into: &writer, replyBudget: budget)
        }
        return (String(decoding: writer.bytes, as: UTF8.self), consumed, ending)
    }

    @Test func executesEveryCompleteRequestAndLeavesTheIncompleteOne() {
        let input = multibulk(["SET", "a", "1"]) + multibulk(["INCR", "a"]) + Array("PING\r\n*2\r\n$3\r\nGET".utf8)
        let (replies, consumed, ending) = run(input)
        #expect(replies == "+OK\r\n:2\r\n+PONG\r\n")
        #expect(consumed == input.count - 11)
        #expect(ending == .needsMoreInput)
    }

    @Test func stopsAtTheReplyBudget() {
        let input = Array(String(repeating: "PING\r\n", count: 10).utf8)
        let (replies, consumed, ending) = run(input, budget: 20)
        // Each +PONG is 7 bytes: the batch stops once 21 >= 20 bytes are encoded.
        #expect(replies == String(repeating: "+PONG\r\n", count: 3))
        #expect(consumed == 18)
        #expect(ending == .overBudget)
    }

    @Test func quitEndsTheBatchAndIgnoresWhatFollows() {
        let (replies, consumed, ending) = run(Array("PING\r\nQUIT\r\nPING\r\n".utf8))
        #expect(replies == "+PONG\r\n+OK\r\n")
        #expect(consumed == 18)
        #expect(ending == .close)
    }

    @Test func aProtocolErrorIsAnsweredAfterTheGoodRequests() {
        let (replies, consumed, ending) = run(Array("PING\r\n*1\r\n:x\r\nPING\r\n".utf8))
        #expect(replies == "+PONG\r\n-ERR Protocol error: expected '$', got ':'\r\n")
        #expect(consumed == 20)
        #expect(ending == .protocolError(.expectedBulk(found: UInt8(ascii: ":"))))
    }
}
