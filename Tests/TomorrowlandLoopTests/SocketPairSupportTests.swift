import Dispatch
import Testing

@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The socketpairs that the TCP tests (the re-entrancy model above all) run connections over:
/// closing the connection's end must reach the peer as end of stream, whatever processes the
/// tests running in parallel spawn.
@Suite("Socketpairs of the TCP tests")
struct SocketPairSupportTests {
    /// Exit tests spawn processes from this one while other tests run: a socketpair made without
    /// close-on-exec stayed open in such a child, so a connection's close did not reach its peer
    /// and the model test failed about one run in two beside the other TCP suites.
    @Test func aSpawnedProcessKeepsNoCopyOfTheConnectionsEnd() throws {
        let (connectionEnd, peer) = makeSocketPair()
        defer { closeDescriptor(peer) }
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("30"), nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        try #require(posix_spawn(&child, "/bin/sleep", nil, nil, arguments, environ) == 0)
        defer {
            kill(child, SIGKILL)
            waitpid(child, nil, 0)
        }
        closeDescriptor(connectionEnd)
        #expect(readUntilEnd(from: peer, within: .seconds(5)).ended, "the spawned process holds the connection's end")
    }

    /// A copy of the connection's end that goes a little after the connection closed its own (a
    /// process between `fork` and `exec`) delays the end of stream, and no more.
    @Test func readUntilEndWaitsForACopyThatClosesLate() {
        let (connectionEnd, peer) = makeSocketPair()
        defer { closeDescriptor(peer) }
        let copy = dup(connectionEnd)
        closeDescriptor(connectionEnd)
        #expect(!readAvailable(from: peer).ended)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            _ = Array("ab".utf8).withUnsafeBytes { send(copy, $0.baseAddress, $0.count, 0) }
            closeDescriptor(copy)
        }
        let received = readUntilEnd(from: peer, within: .seconds(5))
        #expect(received.bytes == Array("ab".utf8))
        #expect(received.ended)
    }

    /// A socket nobody closes never ends: the wait gives up at its timeout.
    @Test func readUntilEndGivesUpWhenTheEndNeverComes() {
        let (connectionEnd, peer) = makeSocketPair()
        defer {
            closeDescriptor(connectionEnd)
            closeDescriptor(peer)
        }
        let started = ContinuousClock.now
        #expect(!readUntilEnd(from: peer, within: .milliseconds(100)).ended)
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }
}
