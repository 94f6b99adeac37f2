import Foundation
import Testing

/// Faults from issue 10: resets, a client that stops reading, descriptor exhaustion, SIGTERM
/// under load. The daemon must keep serving the others and bound its memory.
@Suite(.timeLimit(.minutes(2)))
struct LoopKVFaultTests {
    @Test func aClientResettingMidRequestIsForgotten() throws {
        let server = try LoopKVProcess()
        for _ in 0..<20 {
            let client = try server.connect()
            try client.send(raw: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc")
            client.abort()
        }
        let survivor = try server.connect()
        #expect(try survivor.call("SET", "k", "v") == "+OK\r\n")
        // Only the survivor and the asking connection remain once the resets are seen.
        var clients: Int?
        for _ in 0..<100 {
            clients = try server.connectedClients()
            if clients == 2 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(clients == 2)
        #expect(server.stop() == 0)
    }

    @Test func aClientThatStopsReadingHoldsBoundedMemory() throws {
        let server = try LoopKVProcess()
        let setter = try server.connect()
        let value = String(repeating: "v", count: 512 * 1024)
        #expect(try setter.call("SET", "big", value) == "+OK\r\n")
        let baseline = server.residentBytes
        // 400 GETs of 512 KiB: 200 MiB of replies, requested in one 9 KB write and not read.
        let reader = try server.connect()
        var batch: [UInt8] = []
        for _ in 0..<400 { batch += Array("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".utf8) }
        try reader.send(batch)
        Thread.sleep(forTimeInterval: 1.0)
        let grown = server.residentBytes - baseline
        #expect(grown < 32 * 1024 * 1024, "the daemon grew by \(grown) bytes")
        // Others are served meanwhile.
        #expect(try setter.call("PING") == "+PONG\r\n")
        // And every reply arrives once the client reads.
        let expected = "$524288\r\n" + value + "\r\n"
        for index in 0..<400 {
            let reply = try reader.readReply()
            guard reply == expected else {
                Issue.record("reply \(index) differs: \(reply.prefix(20))")
                break
            }
        }
        #expect(server.stop() == 0)
    }

    @Test func descriptorExhaustionRefusesNewClientsAndKeepsServingOthers() throws {
        let server = try LoopKVProcess([], fileLimit: 40)
        var clients: [RESPClient] = []
        // More clients than descriptors: the kernel completes every handshake (backlog), the
        // daemon accepts what its descriptors allow.
        for _ in 0..<60 { clients.append(try server.connect()) }
        let first = clients[0]
        #expect(try first.call("SET", "k", "v") == "+OK\r\n")
        var served = 0
        for client in clients {
            try client.send(command: ["PING"])
        }
        for client in clients {
            if let reply = try? client.readReplyWithin(seconds: 0.1), reply == "+PONG\r\n" { served += 1 }
        }
        #expect(served >= 10, "served \(served)")
        #expect(served < 60, "all 60 were served under ulimit -n 40")
        #expect(server.process.isRunning)
        // Closing clients frees descriptors; the waiting ones are then accepted and answered.
        let waiting = clients.filter { !$0.hasReplied }
        let finished = clients.filter { $0.hasReplied && $0 !== first }
        for client in finished { client.abort() }
        // Each closed client frees one descriptor, so that many waiting clients get in.
        for (index, client) in waiting.prefix(finished.count).enumerated() {
            let reply = Result { try client.readReply() }
            #expect(
                (try? reply.get()) == "+PONG\r\n",
                "waiting client \(index) of \(waiting.count): \(reply)\n\(server.log.suffix(1500))")
        }
        #expect(try first.call("GET", "k") == "$1\r\nv\r\n")
        #expect(server.stop() == 0)
    }

    /// Plain, and with `--stats-interval`: keyspace counts on a Dispatch queue every 2 ms, each
    /// resolving a promise aimed at loop 0, so counts are still finishing while SIGTERM shuts
    /// the loops down (a late resolve onto a shut-down loop used to kill the process).
    @Test(arguments: [[String](), ["--stats-interval", "0.002"]])
    func sigtermUnderLoadLosesNoReply(extraArguments: [String]) throws {
        let server = try LoopKVProcess(["--loops", "2"] + extraArguments)
        let clientCount = 4
        let results = LockedResults()
        let group = DispatchGroup()
        for clientIndex in 0..<clientCount {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let client = try server.connect()
                    var sent = 0
                    var received = 0
                    var text = ""
                    // Keep 64 requests in flight until the server closes.
                    loop: while true {
                        var batch: [UInt8] = []
                        for _ in 0..<64 { batch += Array("*2\r\n$4\r\nINCR\r\n$2\r\nc\(clientIndex)\r\n".utf8) }
                        do { try client.send(batch) } catch { break loop }
                        sent += 64
                        for _ in 0..<64 {
                            guard let reply = try? client.readReply() else { break loop }
                            received += 1
                            if reply != ":\(received)\r\n" { text = "reply \(received) was \(reply)" }
                        }
                    }
                    results.record(received: received, sent: sent, problem: text)
                } catch {
                    results.record(received: 0, sent: 0, problem: "\(error)")
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        kill(server.process.processIdentifier, SIGTERM)
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(server.stop(signal: 0) == 0, "\(server.log.suffix(1500))")
        if !extraArguments.isEmpty {
            #expect(server.log.contains("keyspace: "), "the background counts ran")
        }
        let all = results.all
        #expect(all.count == clientCount)
        for result in all {
            #expect(result.problem.isEmpty, "\(result.problem)")
            #expect(result.received > 0)
        }
    }
}

/// Per-client outcomes of the load test, from several threads.
final class LockedResults: @unchecked Sendable {
    struct Result {
        var received: Int
        var sent: Int
        var problem: String
    }
    private let lock = NSLock()
    private var results: [Result] = []

    func record(received: Int, sent: Int, problem: String) {
        lock.lock()
        results.append(Result(received: received, sent: sent, problem: problem))
        lock.unlock()
    }

    var all: [Result] {
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}
