@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// A connected pair of Unix stream sockets, both close-on-exec, the second (the test's peer)
/// non-blocking.
///
/// Close-on-exec because exit tests running in parallel spawn child processes from this process:
/// an inheritable descriptor stays open in such a child until it exits, seconds later, and the
/// peer then sees no end of stream when the connection closes its end.
func makeSocketPair() -> (connectionEnd: Int32, peer: Int32) {
    var fds: [Int32] = [0, 0]
    let status = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
    precondition(status == 0, "socketpair failed: errno \(errno)")
    _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
    return (fds[0], fds[1])
}

/// A connection on one end of a socketpair, the test holding the other end (non-blocking): the
/// peer's bytes arrive at once, with no listener or connect in between.
func socketPairConnection(
    on loop: EventLoop, options: TCPConnectionOptions = .init()
) -> (connection: TCPConnection, peer: Int32) {
    let (fd, peer) = makeSocketPair()
    let connection: TCPConnection? = loop.withConfinedState("socketPairConnection", ifShutDown: nil) {
        TCPConnection(fd: fd, loop: loop, options: options, remote: nil)
    }
    guard let connection else { preconditionFailure("socketPairConnection: the loop is shut down") }
    return (connection, peer)
}

/// Which socket a descriptor refers to: descriptor numbers are reused at once by tests running in
/// parallel, socket inodes are not.
struct SocketIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// The socket `fd` refers to now; nil when `fd` is not open.
    init?(of fd: Int32) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
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

/// Everything `peer` receives until end of input, waiting up to `timeout` for the end; `ended`
/// tells whether it came.
///
/// Why the end may come late: from `fork` to `exec`, a process that a test running in parallel
/// spawns (an exit test) holds a copy of every descriptor of this process, close-on-exec or not,
/// so the connection's end of the pair is closed for good only when that copy goes (microseconds,
/// milliseconds on a loaded machine). A connection that never closes its socket still fails,
/// after `timeout`.
func readUntilEnd(from peer: Int32, within timeout: Duration) -> (bytes: [UInt8], ended: Bool) {
    let deadline = ContinuousClock.now + timeout
    var collected: [UInt8] = []
    while true {
        let available = readAvailable(from: peer)
        collected += available.bytes
        let remaining = deadline - ContinuousClock.now
        if available.ended || remaining <= .zero { return (collected, available.ended) }
        var descriptor = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32((remaining / .milliseconds(1)).rounded(.up)))
    }
}
