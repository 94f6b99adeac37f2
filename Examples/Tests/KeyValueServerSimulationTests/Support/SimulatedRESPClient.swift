import KeyValueCore
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandSimulation

/// A RESP client on a simulated host: sends commands or raw bytes, keeps every byte the server
/// sent, and notes the virtual instant its connection closed.
///
/// `@unchecked Sendable`: touched only on the thread that drives the network (its loop's turns
/// run there too).
final class SimulatedRESPClient: @unchecked Sendable {
    /// The client's connection to the server.
    let connection: TCPConnection
    /// The host the client runs on.
    let host: SimulatedHost
    /// Every byte received so far.
    private(set) var received: [UInt8] = []
    /// When the connection closed (virtual time), and with which error; nil while open.
    private(set) var closed: (time: Duration, error: TCPError?)?
    /// When the server's end of output arrived; nil before.
    private(set) var endOfInputTime: Duration?

    init(connection: TCPConnection, host: SimulatedHost, network: SimulatedNetwork, reads: Bool = true) {
        self.connection = connection
        self.host = host
        if reads { startReading(network: network) }
        _ = connection.closed.tap(on: .immediate) { [self] result in
            if case .value(let error) = result { closed = (network.now, error) }
        }
    }

    /// Starts taking what the server sends (a client made with `reads: false` does not, until
    /// this is called).
    func startReading(network: SimulatedNetwork) {
        connection.onInputClosed = { [self] in
            endOfInputTime = network.now
            connection.close(afterFlushing: true)
        }
        connection.startReading { [self] bytes in
            received += bytes
            return bytes.count
        }
    }

    /// Whether the connection has closed.
    var isClosed: Bool { closed != nil }

    /// The complete replies received so far, each as its RESP text.
    var replies: [String] { RESPReplies.split(received).replies }

    /// Received bytes after the last complete reply.
    var incompleteTail: [UInt8] { RESPReplies.split(received).rest }

    /// Sends one command as a multibulk request.
    func send(_ arguments: String...) {
        send(command: arguments)
    }

    /// Sends one command as a multibulk request.
    func send(command arguments: [String]) {
        connection.enqueue(RESPReplies.request(arguments))
    }

    /// Sends `text` as raw bytes.
    func send(raw text: String) {
        connection.enqueue(Array(text.utf8))
    }

    /// Sends `bytes` as they are.
    func send(bytes: [UInt8]) {
        connection.enqueue(bytes)
    }
}

/// RESP framing for the tests: requests out, whole replies in.
enum RESPReplies {
    /// `arguments` as one multibulk request.
    static func request(_ arguments: [String]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.utf8.count)\r\n".utf8) + Array(argument.utf8) + [13, 10]
        }
        return bytes
    }

    /// The complete replies at the start of `bytes`, each as text, and the bytes left after them.
    static func split(_ bytes: [UInt8]) -> (replies: [String], rest: [UInt8]) {
        var replies: [String] = []
        var offset = 0
        while let length = RESPReplyFraming.completeReplyLength(in: bytes, at: offset) {
            replies.append(String(decoding: bytes[offset..<(offset + length)], as: UTF8.self))
            offset += length
        }
        return (replies, Array(bytes[offset...]))
    }
}
