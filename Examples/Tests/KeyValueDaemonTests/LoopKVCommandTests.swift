import Foundation
import Testing

/// The built `loopkv` over real sockets: every command once (a smoke test of the binary), and
/// several loops sharing one port (SO_REUSEPORT, which only the kernel does). How the server
/// frames, pipelines and limits requests is tested on simulation (`KeyValueServerSimulationTests`).
@Suite(.timeLimit(.minutes(2)))
struct LoopKVCommandTests {
    @Test func everyCommandAnswersAsRedisDoes() throws {
        let server = try LoopKVProcess()
        let client = try server.connect()
        #expect(try client.call("PING") == "+PONG\r\n")
        #expect(try client.call("ECHO", "héllo") == "$6\r\nhéllo\r\n")
        #expect(try client.call("SET", "k", "v") == "+OK\r\n")
        #expect(try client.call("GET", "k") == "$1\r\nv\r\n")
        #expect(try client.call("SET", "k", "w", "NX") == "$-1\r\n")
        #expect(try client.call("SET", "k", "w", "XX") == "+OK\r\n")
        #expect(try client.call("SET", "other", "w", "XX") == "$-1\r\n")
        #expect(try client.call("EXISTS", "k", "other", "k") == ":2\r\n")
        #expect(try client.call("INCR", "n") == ":1\r\n")
        #expect(try client.call("INCR", "n") == ":2\r\n")
        #expect(try client.call("DECR", "n") == ":1\r\n")
        #expect(try client.call("INCR", "k") == "-ERR value is not an integer or out of range\r\n")
        #expect(try client.call("SET", "t", "v", "EX", "100") == "+OK\r\n")
        #expect(try client.call("TTL", "t") == ":100\r\n")
        let pttl = try client.call("PTTL", "t")
        #expect(pttl.hasPrefix(":99") || pttl == ":100000\r\n")
        #expect(try client.call("EXPIRE", "k", "50") == ":1\r\n")
        #expect(try client.call("TTL", "k") == ":50\r\n")
        #expect(try client.call("PEXPIRE", "k", "60000") == ":1\r\n")
        #expect(try client.call("TTL", "k") == ":60\r\n")
        #expect(try client.call("TTL", "n") == ":-1\r\n")
        #expect(try client.call("TTL", "missing") == ":-2\r\n")
        #expect(try client.call("DBSIZE") == ":3\r\n")
        #expect(try client.call("DEL", "k", "missing") == ":1\r\n")
        #expect(try client.call("DBSIZE") == ":2\r\n")
        #expect(try client.call("FLUSHALL") == "+OK\r\n")
        #expect(try client.call("DBSIZE") == ":0\r\n")
        #expect(try client.call("INFO").contains("redis_version:"))
        #expect(try client.call("COMMAND", "COUNT").hasPrefix(":"))
        #expect(try client.call("CONFIG", "GET", "save") == "*2\r\n$4\r\nsave\r\n$0\r\n\r\n")
        #expect(
            try client.call("NOPE", "x") == "-ERR unknown command 'NOPE', with args beginning with: 'x' \r\n")
        #expect(try client.call("GET") == "-ERR wrong number of arguments for 'get' command\r\n")
        #expect(try client.call("QUIT") == "+OK\r\n")
        #expect(client.isClosedByServer())
        #expect(server.stop() == 0)
    }

    @Test func everyLoopSeesTheSameKeys() throws {
        let server = try LoopKVProcess(["--loops", "3"])
        let writer = try server.connect()
        for index in 0..<50 {
            #expect(try writer.call("SET", "key\(index)", "\(index)") == "+OK\r\n")
        }
        // With SO_REUSEPORT the kernel spreads these connections over the loops.
        for _ in 0..<12 {
            let reader = try server.connect()
            #expect(try reader.call("GET", "key7") == "$1\r\n7\r\n")
            #expect(try reader.call("DBSIZE") == ":50\r\n")
        }
        #expect(server.stop() == 0)
    }
}
