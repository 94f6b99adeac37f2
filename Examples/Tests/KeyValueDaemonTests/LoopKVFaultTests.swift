import Foundation
import Testing
import TomorrowlandTestSupport

/// Faults only the real kernel shows: descriptor exhaustion (`ulimit -n`) and SIGTERM under load
/// on two loops. Resets and a client that stops reading are tested on simulation
/// (`KeyValueServerSimulationTests`).
@Suite(.timeLimit(.minutes(2)))
struct LoopKVFaultTests {
    @Test func descriptorExhaustionRefusesNewClientsAndKeepsServingOthers() throws {
        let server = try LoopKVProcess([], fileLimit: 40)
        var clients: [RESPClient] = []
        // More clients than descriptors: the kernel completes every handshake (backlog), the
        // daemon accepts what its descriptors allow.
        for _ in 0..<60 { clients.append(try server.connect()) }
        let first = clients[0]
        #expect(try first.call("SET", "k", "v") == "+OK\r\n")
        for client in clients {
            try client.send(command: ["PING"])
        }
        let served = Self.pongs(from: clients)
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

    /// Reads the reply of each of `clients` that gets one, until none has come for `quiet`
    /// milliseconds; answers how many were PONG. The replies of the accepted clients come in
    /// quick succession however slow the machine, so only a long silence says the rest wait
    /// unaccepted (a fixed wait per client would miss slow replies on a loaded machine).
    private static func pongs(from clients: [RESPClient], quiet: Int32 = 2_000) -> Int {
        var pending = clients
        var served = 0
        while !pending.isEmpty {
            var descriptors = pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&descriptors, nfds_t(descriptors.count), quiet) > 0 else { break }
            var unanswered: [RESPClient] = []
            for (client, descriptor) in zip(pending, descriptors) {
                if descriptor.revents == 0 {
                    unanswered.append(client)
                } else if (try? client.readReply()) == "+PONG\r\n" {
                    served += 1
                }
            }
            pending = unanswered
        }
        return served
    }

    /// Plain, and with `--stats-interval`: keyspace counts on a Dispatch queue every 2 ms, each
    /// resolving a promise aimed at loop 0, so counts are still finishing while SIGTERM shuts
    /// the loops down (a late resolve onto a shut-down loop used to kill the process).
    @Test(arguments: [[String](), ["--stats-interval", "0.002"]])
    func sigtermUnderLoadLosesNoReply(extraArguments: [String]) throws {
        let server = try LoopKVProcess(["--loops", "2"] + extraArguments)
        let clientCount = 4
        let results = Recorder<LoadResult>()
        let group = DispatchGroup()
        // Signalled once per client, at its first reply: SIGTERM comes when all are under way.
        let underWay = DispatchSemaphore(value: 0)
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
                            if received == 1 { underWay.signal() }
                            if reply != ":\(received)\r\n" { text = "reply \(received) was \(reply)" }
                        }
                    }
                    results.record(LoadResult(received: received, sent: sent, problem: text))
                } catch {
                    results.record(LoadResult(received: 0, sent: 0, problem: "\(error)"))
                }
            }
        }
        for _ in 0..<clientCount {
            #expect(underWay.wait(timeout: .now() + 20) == .success, "a client got no reply before SIGTERM")
        }
        // And a moment more under load, so that the signal lands among requests in flight.
        Thread.sleep(forTimeInterval: 0.2)
        kill(server.process.processIdentifier, SIGTERM)
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(server.stop(signal: 0) == 0, "\(server.log.suffix(1500))")
        if !extraArguments.isEmpty {
            #expect(server.log.contains("keyspace: "), "the background counts ran")
        }
        let all = results.values
        #expect(all.count == clientCount)
        for result in all {
            #expect(result.problem.isEmpty, "\(result.problem)")
            #expect(result.received > 0)
        }
    }
}

/// One client's outcome in the load test (recorded from its thread).
struct LoadResult: Sendable {
    var received: Int
    var sent: Int
    var problem: String
}
