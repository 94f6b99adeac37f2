import Foundation
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

// Runs one seeded simulation (an echo server and five clients) and prints, as its last line,
// `seed=S digest=D fds=B->A threads=B->A`: the trace's digest, and the process's open descriptors
// and threads before and after the run. TomorrowlandSimulationTests launches it twice per seed to
// check that a seed replays the same in another process (Swift seeds `Hashable` per process), and
// that a run opens no descriptor and starts no thread.
//
// Usage: SimulationDigestProbe SEED

func entries(_ path: String) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: path).count) ?? -1
}

let seed = CommandLine.arguments.count > 1 ? UInt64(CommandLine.arguments[1]) ?? 1 : 1
let descriptorsBefore = entries("/proc/self/fd")
let threadsBefore = entries("/proc/self/task")

let network = SimulatedNetwork(seed: seed)
let server = network.addHost("server")
let clients = (0..<5).map { network.addHost("client\($0)") }
var random = network.makeRandom()

let listener = try TCPListener.listen(host: "", port: 7, on: server.loop) { connection in
    connection.startReading { bytes in
        connection.enqueue(bytes)
        return bytes.count
    }
}
let replies = clients.map { client -> Promise<Bool, TCPError> in
    let message = (0..<Int(random.next() % 3000 + 1)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    return TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(5))
        .flatMap(on: .loop(client.loop)) { connection in
            connection.write(message)
                .flatMap(on: .loop(client.loop)) { connection.read(exactly: message.count) }
                .map(on: .loop(client.loop)) { echoed in
                    connection.close()
                    return echoed == message
                }
        }
}
// Every reply resolves on its client's loop; the network goes idle once all connections closed.
// (No `when(fulfilled:)`: it gathers on a Dispatch queue, whose threads would be counted.)
network.runUntilIdle()
guard replies.allSatisfy({ $0.result == .value(true) }) else {
    print("SimulationDigestProbe: the echo run failed: \(replies.map { String(describing: $0.result) })")
    exit(1)
}
listener.close()
for host in network.hosts { host.group.syncShutdownGracefully() }
network.runUntilIdle()

print(
    "seed=\(seed) digest=\(network.digestHex) fds=\(descriptorsBefore)->\(entries("/proc/self/fd")) threads=\(threadsBefore)->\(entries("/proc/self/task"))"
)
