import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

/// An echo server on `host`: what it reads it writes back; at the peer's end of input it closes
/// after flushing (the streaming default).
func startEchoServer(on host: SimulatedHost, port: UInt16 = 7) throws -> TCPListener {
    try TCPListener.listen(host: "", port: port, on: host.loop) { connection in
        connection.startReading { bytes in
            connection.enqueue(bytes)
            return bytes.count
        }
    }
}

/// Connects from `client` to the echo server, writes `message`, reads it back and closes.
func echo(_ message: [UInt8], from client: SimulatedHost, to server: String = "server") -> Promise<[UInt8], TCPError> {
    let loop = client.loop
    return TCPConnection.connect(host: server, port: 7, on: loop, timeout: .seconds(5))
        .flatMap(on: .loop(loop)) { connection in
            connection.write(message)
                .flatMap(on: .loop(loop)) { connection.read(exactly: message.count) }
                .map(on: .loop(loop)) { echoed in
                    connection.close()
                    return echoed
                }
        }
}

/// Reads until the peer's end of input; the bytes, in order.
func readToEnd(_ connection: TCPConnection, into collected: [UInt8] = []) -> Promise<[UInt8], TCPError> {
    connection.read(maxBytes: 65_536).flatMap(on: .loop(connection.loop)) { bytes in
        bytes.isEmpty ? Promise(fulfilled: collected) : readToEnd(connection, into: collected + bytes)
    }
}

/// A world of one echo server and `clientCount` clients, each echoing a message of random size
/// and content drawn from the network's seed; returns the network after the run, and whether
/// every message came back intact. `observe` installs a receive observer that counts bytes.
func runEchoWorld(seed: UInt64, clientCount: Int = 4, observe: Bool = false) throws -> (SimulatedNetwork, Bool) {
    let network = SimulatedNetwork(seed: seed)
    var observedBytes = 0
    if observe { network.receiveObserver = { _, _, bytes in observedBytes += bytes.count } }
    let server = network.addHost("server")
    let clients = (0..<clientCount).map { network.addHost("client\($0)") }
    var random = network.makeRandom()
    let listener = try startEchoServer(on: server)
    var messages: [[UInt8]] = []
    let replies = clients.map { client -> Promise<[UInt8], TCPError> in
        let message = (0..<Int(random.next() % 5000 + 1)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        messages.append(message)
        return echo(message, from: client)
    }
    // Every reply resolves on its client's loop, and the network goes idle once every connection
    // closed. (`when(fulfilled:)` would gather on a Dispatch queue, outside the simulation.)
    network.runUntilIdle()
    listener.close()
    network.runUntilIdle()
    let echoed = replies.map { $0.result?.value }
    // Each message crossed twice (to the server, back to its client).
    let observedAll = !observe || observedBytes == 2 * messages.reduce(0) { $0 + $1.count }
    return (network, echoed == messages && observedAll)
}

/// Bytes `0, 1, 2, ...` wrapping at 251 (a prime, so that a shifted or repeated block shows).
func pattern(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8($0 % 251) }
}
