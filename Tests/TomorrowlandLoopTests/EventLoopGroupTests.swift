import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("EventLoopGroup")
struct EventLoopGroupTests {
    @Test func nextHandsOutTheLoopsRoundRobin() {
        let group = EventLoopGroup(loopCount: 3)
        let picked = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        let loops = group.loops.map(ObjectIdentifier.init)
        #expect(picked == loops + loops)
        group.syncShutdownGracefully()
    }

    @Test func eachLoopRunsItsWorkOnItsOwnThread() {
        let group = EventLoopGroup(loopCount: 2)
        let threads = Recorder<UInt>()
        let done = DispatchGroup()
        for loop in group.loops {
            done.enter()
            loop.execute {
                precondition(loop.inEventLoop)
                threads.record(UInt(pthread_self()))
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(Set(threads.values).count == 2)
        #expect(!threads.values.contains(UInt(pthread_self())))
        group.syncShutdownGracefully()
    }

    @Test func syncShutdownRunsPendingWorkAndStopsEveryThread() {
        let group = EventLoopGroup(loopCount: 2)
        let count = Locked(0)
        for index in 0..<1000 {
            group.next().execute { count.withLock { $0 += 1 } }
            if index == 500 { group.loops[0].stop() }  // a stopped loop's thread drives it again
        }
        group.syncShutdownGracefully()
        #expect(count.value == 1000)
        #expect(group.loops.allSatisfy { $0.isShutdownComplete })
    }

    @Test func shutdownGracefullyFulfilsItsPromiseOnceEveryThreadExited() {
        let group = EventLoopGroup(loopCount: 2)
        let pendingTimerRan = Locked(false)
        _ = group.next().schedule(after: .seconds(3600)) { pendingTimerRan.value = true }
        let done = DispatchSemaphore(value: 0)
        group.shutdownGracefully().always(on: .default) { _ in done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(group.loops.allSatisfy { $0.isShutdownComplete })
        #expect(!pendingTimerRan.value)
    }

    @Test func shutdownGracefullyMayBeCalledFromOneOfTheGroupsLoops() {
        let group = EventLoopGroup(loopCount: 2)
        let done = DispatchSemaphore(value: 0)
        group.loops[1].execute {
            group.shutdownGracefully(queue: .global()) { done.signal() }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(group.loops.allSatisfy { $0.isShutdownComplete })
    }
}
