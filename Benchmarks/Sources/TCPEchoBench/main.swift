import CBuffereventEcho
import Foundation
import Tomorrowland
import TomorrowlandLoop

// Echo round trips per second over loopback TCP, one 64-byte message in flight at a time. The
// client runs on this thread's EventLoop, the server on another thread: either our TCPListener /
// TCPConnection echo server (an EventLoopGroup of 1), or, as a baseline, libevent's textbook
// bufferevent echo server written in C on its own event_base. Two client styles: promise reads
// (write, then read(exactly:)) and streaming (startReading + enqueue, the server style).
//
// Usage: TCPEchoBench [round trips per run, default 50000] [runs, default 5]

let roundTrips = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 50_000 : 50_000
let runs = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 5 : 5
let message = [UInt8](repeating: 0x61, count: 64)

let group = EventLoopGroup(loopCount: 1)
let serverLoop = group.loops[0]
let ourServer = Promise<UInt16, TCPError>(on: .loop(serverLoop)) { resolver in
    resolver.resolve(
        with: Result { () throws(TCPError) in
            try TCPListener.listen(host: "127.0.0.1", port: 0, on: serverLoop) { connection in
                connection.startReading { bytes in
                    connection.enqueue(bytes)
                    return bytes.count
                }
            }.localPort
        })
}

let clientLoop = EventLoop()
guard let ourPort = clientLoop.run(until: ourServer).value else { fatalError("TCPEchoBench: our server did not start") }
let baselinePort = UInt16(cbench_start_bufferevent_echo())
guard baselinePort != 0 else { fatalError("TCPEchoBench: the bufferevent server did not start") }

func connect(_ port: UInt16) -> TCPConnection {
    guard
        let connection = clientLoop.run(
            until: TCPConnection.connect(host: "127.0.0.1", port: port, on: clientLoop, timeout: .seconds(5))
        ).value
    else { fatalError("TCPEchoBench: could not connect to port \(port)") }
    return connection
}

func rate(_ count: Int, since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

/// Round trips with promise reads: write, then read(exactly:), then the next.
final class PromisePingPong: @unchecked Sendable {
    // Loop-confined: touched only on the client loop's thread.
    let connection: TCPConnection
    var remaining = 0
    var resolver: Promise<Void, TCPError>.Resolver?

    init(_ connection: TCPConnection) {
        self.connection = connection
    }

    func measure(_ count: Int) -> Double {
        let (done, resolver) = Promise<Void, TCPError>.makeWithResolver()
        remaining = count
        self.resolver = resolver
        let start = ContinuousClock.now
        clientLoop.execute { self.step() }
        _ = clientLoop.run(until: done)
        return rate(count, since: start)
    }

    private func step() {
        connection.enqueue(message)
        _ = connection.read(exactly: message.count).then(on: .immediate) { [self] _ in
            remaining -= 1
            if remaining == 0 {
                resolver?.fulfill(with: ())
            } else {
                step()
            }
        }
    }
}

/// Round trips with a streaming client: the handler sends the next message when one comes back.
final class StreamingPingPong: @unchecked Sendable {
    // Loop-confined: touched only on the client loop's thread.
    let connection: TCPConnection
    var remaining = 0
    var resolver: Promise<Void, NoError>.Resolver?

    init(_ connection: TCPConnection) {
        self.connection = connection
        connection.startReading { [unowned self] bytes in
            guard bytes.count >= message.count else { return 0 }
            remaining -= 1
            if remaining == 0 {
                resolver?.fulfill(with: ())
            } else {
                connection.enqueue(message)
            }
            return message.count
        }
    }

    func measure(_ count: Int) -> Double {
        let (done, resolver) = Promise<Void, NoError>.makeWithResolver()
        remaining = count
        self.resolver = resolver
        let start = ContinuousClock.now
        clientLoop.execute { self.connection.enqueue(message) }
        _ = clientLoop.run(until: done)
        return rate(count, since: start)
    }
}

func report(_ label: String, _ measure: (Int) -> Double) {
    _ = measure(2000)
    let results = (0..<runs).map { _ in measure(roundTrips) }.sorted()
    print(
        "\(label): median \(Int(results[runs / 2])) round trips/s (min \(Int(results[0])), max \(Int(results[runs - 1]))), \(runs) runs of \(roundTrips)"
    )
}

var connections: [TCPConnection] = []
for (server, port) in [("TCPListener server", ourPort), ("C bufferevent server", baselinePort)] {
    let promiseClient = PromisePingPong(connect(port))
    report("\(server), promise-read client") { promiseClient.measure($0) }
    let streamingClient = StreamingPingPong(connect(port))
    report("\(server), streaming client") { streamingClient.measure($0) }
    connections += [promiseClient.connection, streamingClient.connection]
}

for connection in connections { connection.close() }
clientLoop.shutdown()
group.syncShutdownGracefully()
