import Foundation
import KeyValueCore

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking RESP client over a loopback TCP socket, for tests: sends raw bytes or commands and
/// reads whole replies, each returned as its RESP text.
final class RESPClient {
    let fd: Int32
    private var isAborted = false
    private let receiveTimeout: Double
    /// Whether ``readReply()`` has returned a reply on this connection.
    private(set) var hasReplied = false
    private var buffer: [UInt8] = []

    enum ClientError: Error, Equatable {
        case system(String, Int32)
        case closed
        case timedOut
    }

    init(port: UInt16, receiveTimeout: Double = 10) throws {
        self.receiveTimeout = receiveTimeout
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw ClientError.system("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw ClientError.system("connect", error)
        }
        setReceiveTimeout(receiveTimeout)
    }

    private func setReceiveTimeout(_ seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// ``readReply()`` waiting at most `seconds` for bytes to arrive.
    func readReplyWithin(seconds: Double) throws -> String {
        setReceiveTimeout(seconds)
        defer { setReceiveTimeout(receiveTimeout) }
        return try readReply()
    }

    deinit {
        if !isAborted { Glibc.close(fd) }
    }

    /// Closes with a reset (SO_LINGER 0): the server sees ECONNRESET, not an orderly EOF.
    func abort() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
        isAborted = true
    }

    /// Sends `bytes` in full.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw ClientError.system("send", errno) }
            offset += sent
        }
    }

    /// Sends one command as a multibulk request.
    func send(command arguments: [String]) throws {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.utf8.count)\r\n".utf8) + Array(argument.utf8) + [13, 10]
        }
        try send(bytes)
    }

    /// Sends a command and returns its reply.
    func call(_ arguments: String...) throws -> String {
        try send(command: arguments)
        return try readReply()
    }

    /// Reads one complete reply and returns its RESP text.
    func readReply() throws -> String {
        String(decoding: try readReplyBytes(), as: UTF8.self)
    }

    /// Reads one complete reply and returns its bytes.
    func readReplyBytes() throws -> [UInt8] {
        while true {
            if let length = RESPReplyFraming.completeReplyLength(in: buffer, at: 0) {
                let reply = Array(buffer[..<length])
                buffer.removeFirst(length)
                hasReplied = true
                return reply
            }
            try fill()
        }
    }

    /// Whether the server closed the connection (EOF or reset) within the receive timeout.
    func isClosedByServer() -> Bool {
        do {
            while true { try fill() }
        } catch ClientError.closed {
            return true
        } catch ClientError.system(_, let code) where code == ECONNRESET {
            return true
        } catch {
            return false
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if received == 0 { throw ClientError.closed }
        if received < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw ClientError.timedOut }
            throw ClientError.system("recv", errno)
        }
        buffer += chunk[..<received]
    }
}
