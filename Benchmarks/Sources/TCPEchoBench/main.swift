import Foundation
import Tomorrowland
import TomorrowlandLoop

// Echo round trips per second over loopback TCP: an echo server on one loop (its own thread,
// an EventLoopGroup of 1), a client on another loop (this thread), one 64-byte message in
// flight at a time. Two client styles: streaming (startReading + enqueue, the server style)
// and promise reads (write, then read(exactly:)).
//
// Usage: TCPEchoBench [round trips per run, default 50000] [runs, default 5]

let roundTrips = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 50_000 : 50_000
let runs = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 5 : 5
let message = [UInt8](repeating: 0x61, count: 64)

let group = EventLoopGroup(loopCount: 1)
let serverLoop = group.loops[0]
let port = Promise<UInt16, TCPError>(on: .loop(serverLoop)) { resolver in
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
guard let serverPort = clientLoop.run(until: port).value,
    let client = clientLoop.run(
        until: TCPConnection.connect(host: "127.0.0.1", port: serverPort, on: clientLoop, timeout: .seconds(5))
    ).value
else {
    fatalError("TCPEchoBench: could not start the server or connect")
}

/// Round trips with promise reads: write, then read(exactly:), then the next.
final class PromisePingPong: @unchecked Sendable {
    // Loop-confined: touched only on the client loop's thread.
    let connection: TCPConnection
    var remaining: Int
    let (done, resolver) = Promise<Void, TCPError>.makeWithResolver()
    init(_ connection: TCPConnection, count: Int) {
        self.connection = connection
        remaining = count
    }
    func step() {
        connection.enqueue(message)
        _ = connection.read(exactly: message.count).then(on: .immediate) { [self] _ in
            remaining -= 1
            if remaining == 0 {
                resolver.fulfill(with: ())
            } else {
                step()
            }
        }
    }
}

func measurePromises(_ count: Int) -> Double {
    let pingPong = PromisePingPong(client, count: count)
    let start = ContinuousClock.now
    pingPong.step()
    _ = clientLoop.run(until: pingPong.done)
    let elapsed = ContinuousClock.now - start
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

var results: [Double] = []
_ = measurePromises(2000)
for _ in 0..<runs { results.append(measurePromises(roundTrips)) }
results.sort()
print(
    "promise reads: \(roundTrips) round trips x \(runs) runs, median \(Int(results[runs / 2])) round trips/s (min \(Int(results[0])), max \(Int(results[runs - 1])))"
)

// Streaming client on a second connection.
let streamingClient = clientLoop.run(
    until: TCPConnection.connect(host: "127.0.0.1", port: serverPort, on: clientLoop, timeout: .seconds(5))
).value!
final class StreamingPingPong: @unchecked Sendable {
    // Loop-confined: touched only on the client loop's thread.
    var remaining = 0
    var resolver: Promise<Void, NoError>.Resolver?
}
let streaming = StreamingPingPong()
streamingClient.startReading { bytes in
    guard bytes.count >= message.count else { return 0 }
    streaming.remaining -= 1
    if streaming.remaining == 0 {
        streaming.resolver?.fulfill(with: ())
    } else {
        streamingClient.enqueue(message)
    }
    return message.count
}
func measureStreaming(_ count: Int) -> Double {
    let (done, resolver) = Promise<Void, NoError>.makeWithResolver()
    streaming.remaining = count
    streaming.resolver = resolver
    let start = ContinuousClock.now
    clientLoop.execute { streamingClient.enqueue(message) }
    _ = clientLoop.run(until: done)
    let elapsed = ContinuousClock.now - start
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}
results = []
_ = measureStreaming(2000)
for _ in 0..<runs { results.append(measureStreaming(roundTrips)) }
results.sort()
print(
    "streaming: \(roundTrips) round trips x \(runs) runs, median \(Int(results[runs / 2])) round trips/s (min \(Int(results[0])), max \(Int(results[runs - 1])))"
)

client.close()
streamingClient.close()
clientLoop.shutdown()
group.syncShutdownGracefully()
