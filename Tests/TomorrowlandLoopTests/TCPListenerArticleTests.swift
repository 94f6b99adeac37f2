import Foundation
import Testing
import Tomorrowland
import TomorrowlandLoop

// The samples of the "Serving TCP" DocC article (Sources/TomorrowlandLoop/TomorrowlandLoop.docc/
// ServingTCP.md), so that the article stays true. Each sample's code is the article's.

/// Starts an echo server on every loop of `group`, on one port; resolves with the listeners.
private func startEchoServers(on group: EventLoopGroup, port: UInt16) async throws -> [TCPListener] {
    var options = TCPListenerOptions()
    options.reusePort = true
    var listeners: [TCPListener] = []
    var port = port
    for loop in group.loops {
        // `bind` hops to the loop, which its own thread already drives.
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: port, on: loop, options: options) {
            connection in
            // On `loop`'s thread: echo everything back.
            connection.startReading { bytes in
                connection.enqueue(bytes)
                return bytes.count
            }
        }.value
        port = listener.localPort  // with port 0, the others share the first one's pick
        listeners.append(listener)
    }
    return listeners
}

/// Stops the servers of `startEchoServers`, then the group.
private func stopEchoServers(_ listeners: [TCPListener], group: EventLoopGroup) async {
    for listener in listeners {
        _ = await listener.shutdownGracefully(within: .seconds(5)).resolvedResult
    }
    group.syncShutdownGracefully()
}

@Suite("The Serving TCP article")
struct TCPListenerArticleTests {
    @Test func theEchoServersOfAGroupShareAPortEchoAndStopGracefully() async throws {
        let group = EventLoopGroup(loopCount: 2)
        let listeners = try await startEchoServers(on: group, port: 0)
        #expect(listeners.count == 2)
        #expect(Set(listeners.map(\.localPort)).count == 1)
        let client = try BlockingTCPClient.connect(port: listeners[0].localPort).get()
        #expect(client.send(Array("hello".utf8)))
        client.setReadTimeout(.seconds(10))
        var echoed = [UInt8](repeating: 0, count: 5)
        let count = echoed.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, 5, Int32(MSG_WAITALL)) }
        #expect(count == 5)
        #expect(echoed == Array("hello".utf8))
        await stopEchoServers(listeners, group: group)
        // The graceful shutdown closed the client's connection: it sees the end of input.
        #expect(client.readToEnd().end == .endOfInput)
        #expect(listeners.allSatisfy { $0.isClosed })
    }
}
