@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// A connection on one end of a socketpair, the test holding the other end (non-blocking): the
/// peer's bytes arrive at once, with no listener or connect in between.
func socketPairConnection(
    on loop: EventLoop, options: TCPConnectionOptions = .init()
) -> (connection: TCPConnection, peer: Int32) {
    var fds: [Int32] = [0, 0]
    let status = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
    precondition(status == 0, "socketpair failed: errno \(errno)")
    _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
    let fd = fds[0]
    let connection = loop.withConfinedAccess("socketPairConnection") {
        TCPConnection(fd: fd, loop: loop, options: options, remote: nil)
    }
    return (connection, fds[1])
}

/// Everything `peer` can read now, without blocking; `ended` tells whether it saw end of input.
func readAvailable(from peer: Int32) -> (bytes: [UInt8], ended: Bool) {
    var collected: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            collected += buffer[..<count]
        } else {
            return (collected, count == 0)
        }
    }
}
