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
// With `faults`, the network also draws every kind of fault from the seed (SimulatedFaultPlan),
// the server's daemon starts again after each restart, replies may fail, and the last line adds
// `faults=F`.
//
// Usage: SimulationDigestProbe SEED [faults]

func entries(_ path: String) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: path).count) ?? -1
}

let seed = CommandLine.arguments.count > 1 ? UInt64(CommandLine.arguments[1]) ?? 1 : 1
let withFaults = CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "faults"
let descriptorsBefore = entries("/proc/self/fd")
let threadsBefore = entries("/proc/self/task")

let network = SimulatedNetwork(seed: seed)
let server = network.addHost("server")
let clients = (0..<5).map { network.addHost("client\($0)") }
var random = network.makeRandom()

func startEchoServer(on host: SimulatedHost) throws -> TCPListener {
    try TCPListener.listen(host: "", port: 7, on: host.loop) { connection in
        connection.startReading { bytes in
            connection.enqueue(bytes)
            return bytes.count
        }
    }
}
var listener = try startEchoServer(on: server)
if withFaults {
    var plan = SimulatedFaultPlan()
    plan.resetInterval = .milliseconds(2)
    plan.partitionInterval = .milliseconds(5)
    plan.crashInterval = .milliseconds(20)
    plan.crashableHosts = ["server"]
    plan.restartDelay = .milliseconds(1) ... .milliseconds(20)
    plan.descriptorExhaustionInterval = .milliseconds(10)
    plan.unreachableInterval = .milliseconds(10)
    plan.nameFaultProbability = 0.2
    plan.lateNameDelay = .milliseconds(1) ... .milliseconds(50)
    network.onHostRestart = { host in
        if let restarted = try? startEchoServer(on: host) { listener = restarted }
    }
    network.faultPlan = plan
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
if withFaults {
    network.run(for: .seconds(6))
    network.faultPlan = .none
}
network.runUntilIdle()
guard withFaults || replies.allSatisfy({ $0.result == .value(true) }) else {
    print("SimulationDigestProbe: the echo run failed: \(replies.map { String(describing: $0.result) })")
    exit(1)
}
listener.close()
for host in network.hosts { host.group.syncShutdownGracefully() }
network.runUntilIdle()

print(
    "seed=\(seed) digest=\(network.digestHex)\(withFaults ? " faults=\(network.faultCount)" : "") fds=\(descriptorsBefore)->\(entries("/proc/self/fd")) threads=\(threadsBefore)->\(entries("/proc/self/task"))"
)
