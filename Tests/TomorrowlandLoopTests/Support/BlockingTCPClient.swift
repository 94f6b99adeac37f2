import Foundation
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// A plain blocking client socket to 127.0.0.1, used on a test's own thread while the loop under
/// test runs on another (``LoopThread``, an ``EventLoopGroup``).
final class BlockingTCPClient {
    /// How a ``readToEnd(limit:)`` stopped.
    enum End: Equatable {
        case endOfInput
        case reset
        case timedOut
        case limitReached
        case failed(errno: Int32)
    }

    let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Connects to 127.0.0.1:`port`; every read gives up after `timeout`. With a
    /// `receiveBuffer`, the socket's receive buffer is fixed at that size before connecting
    /// (which turns the kernel's autotuning off), so a client that does not read holds little.
    ///
    /// - Returns: The client, or the `errno` of the failed `connect`.
    static func connect(
        port: UInt16, receiveBuffer: Int32? = nil, timeout: Duration = .seconds(10)
    ) -> Result<BlockingTCPClient, BlockingTCPClientError> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(.init(errno: errno)) }
        let client = BlockingTCPClient(fd: fd)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        client.setReadTimeout(timeout)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else { return .failure(.init(errno: errno)) }
        return .success(client)
    }

    /// Makes every later read give up after `timeout`.
    func setReadTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes`; false if the socket failed.
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    /// Reads until end of input, an error, the read timeout, or `limit` bytes.
    func readToEnd(limit: Int = .max) -> (bytes: [UInt8], end: End) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while received.count < limit {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[0..<count])
                continue
            }
            if count == 0 { return (received, .endOfInput) }
            switch errno {
            case EINTR: continue
            case EAGAIN: return (received, .timedOut)
            case ECONNRESET: return (received, .reset)
            case let code: return (received, .failed(errno: code))
            }
        }
        return (received, .limitReached)
    }
}

/// A failed system call of ``BlockingTCPClient``.
struct BlockingTCPClientError: Error, Equatable {
    let errno: Int32
}
