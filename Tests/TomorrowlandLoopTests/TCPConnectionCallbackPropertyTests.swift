import Glibc
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// `onWritable` and `onInputClosed` from threads that do not drive the loop: every access keeps
/// loop confinement, before, during and after the connection's close and the loop's shutdown.
@Suite("TCPConnection callback properties from other threads")
struct TCPConnectionCallbackPropertyTests {
    /// How many times each of two threads sets a property after the loop shut down.
    private static let setsPerThread = 100_000

    @Test func settingTheCallbacksFromTwoThreadsAfterShutdownTouchesNothingAndReleasesEveryClosure() async {
        let loop = EventLoop()
        let (connection, peer) = socketPairConnection(on: loop)
        defer { close(peer) }
        loop.shutdown()
        #expect(connection.isClosed)
        let spy = ReleaseSpy()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    await onDedicatedThread {
                        for index in 0..<Self.setsPerThread {
                            let token = spy.token()
                            if index.isMultiple(of: 2) {
                                connection.onWritable = { _ = token }
                            } else {
                                connection.onInputClosed = { _ = token }
                            }
                        }
                    }
                }
            }
        }
        // The connection is closed for good: nothing set now is kept (it would never be called).
        #expect(connection.onWritable == nil)
        #expect(connection.onInputClosed == nil)
        #expect(spy.releasedCount == 2 * Self.setsPerThread)
    }

    @Test func readingTheCallbacksFromAnotherThreadWhileTheLoopClosesTheConnectionSeesThemOrNil() async {
        let loop = EventLoop()
        let driver = LoopThread(loop)
        #expect(driver.waitUntilRunning())
        for _ in 0..<10 {
            let (connection, peer) = socketPairConnection(on: loop)
            defer { close(peer) }
            connection.onWritable = {}
            connection.onInputClosed = {}
            let reads = Locked(0)
            await onDedicatedThread {
                let deadline = ContinuousClock.now + generousTimeout
                // Reads until it saw the close, and then once more.
                while ContinuousClock.now < deadline {
                    let closedBeforeRead = connection.closed.result != nil
                    _ = connection.onWritable
                    _ = connection.onInputClosed
                    let count = reads.withLock { count in
                        count += 1
                        return count
                    }
                    // On the loop's thread, while this one keeps reading: the close sets both
                    // properties to nil there.
                    if count == 100 { loop.execute { connection.close() } }
                    if closedBeforeRead { return }
                }
            }
            #expect(reads.value > 100)
            #expect(connection.closed.result != nil)
            #expect(connection.onWritable == nil)
            #expect(connection.onInputClosed == nil)
        }
        loop.shutdown()
        #expect(driver.join())
    }
}
