import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// Loop-bound set-up called from threads that do not drive the loop, racing the thread that does.
@Suite("EventLoop: set-up from any thread")
struct EventLoopAnyThreadSetupTests {
    @Test(
        "watch(fileDescriptor:) from another thread while the loop runs registers on the loop and calls the handler there"
    )
    func watchingFromAnotherThreadWhileTheLoopRuns() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let calledOnLoop = Locked<Bool?>(nil)
        let watcher = try loop.watch(fileDescriptor: descriptors[0], for: .readable) { _ in
            if calledOnLoop.value == nil { calledOnLoop.value = loop.inEventLoop }
        }
        #expect(write(descriptors[1], "x", 1) == 1)
        #expect(waitUntil { calledOnLoop.value != nil })
        #expect(calledOnLoop.value == true)
        watcher.cancel()
        loop.shutdown()
        #expect(thread.join())
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test("watch(signal:) from another thread on a shut-down loop throws shutDown")
    func watchingAShutDownLoopFromAnotherThreadThrows() {
        let loop = EventLoop()
        loop.shutdown()
        let outcome = DispatchQueue.global().sync { () -> Bool in
            do {
                _ = try loop.watch(signal: SIGUSR2) { _ in }
                return false
            } catch EventLoopError.shutDown {
                return true
            } catch {
                return false
            }
        }
        #expect(outcome)
    }

    @Test("a watch on a loop from inside another loop's visit on the thread that drives it registers at once")
    func watchingFromANestedVisitOnTheDrivingThread() throws {
        // The thread drives `outer`, and inside its work visits the idle `inner`; there it watches
        // on `outer`, which it still drives: waiting for `outer` would wait for itself.
        let outer = EventLoop()
        let inner = EventLoop()
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readEnd = descriptors[0]
        let registered = Locked(false)
        outer.execute {
            _ = inner.submitOnLoop(runsInlineWhenPossible: true) {
                guard let watcher = try? outer.watch(fileDescriptor: readEnd, for: .readable, { _ in }) else { return }
                registered.value = true
                watcher.cancel()
            }
        }
        outer.runUntilIdle()
        #expect(registered.value)
        outer.shutdown()
        inner.shutdown()
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test("1,000 watchers registered from 8 threads on a running loop all register and cancel")
    func watchingFromEightThreads() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readEnd = descriptors[0]
        let registered = Atomic<Int>(0)
        runConcurrently(8) { _ in
            for _ in 0..<125 {
                guard let watcher = try? loop.watch(fileDescriptor: readEnd, for: .readable, { _ in }) else { continue }
                registered.add(1, ordering: .relaxed)
                watcher.cancel()
            }
        }
        #expect(registered.load(ordering: .relaxed) == 1000)
        loop.shutdown()
        #expect(thread.join())
        close(descriptors[0])
        close(descriptors[1])
    }

    @Test(
        "startReading, onInputClosed, stopReading and resumeReading from another thread while the loop runs take effect on the loop"
    )
    func connectionSetUpFromAnotherThreadWhileTheLoopRuns() {
        // They were loop-only: from another thread while the loop ran, a precondition failure.
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let (connection, peer) = socketPairConnection(on: loop)
        let received = Recorder<String>()
        connection.onInputClosed = { received.record("end on loop: \(loop.inEventLoop)") }
        connection.startReading { bytes in
            received.record("\(String(decoding: bytes, as: UTF8.self)) on loop: \(loop.inEventLoop)")
            return bytes.count
        }
        #expect(write(peer, "hello", 5) == 5)
        #expect(waitUntil { received.values.count == 1 })
        connection.stopReading()
        connection.resumeReading()
        shutdown(peer, Int32(SHUT_WR))
        #expect(waitUntil { received.values.count == 2 })
        #expect(received.values == ["hello on loop: true", "end on loop: true"])
        connection.close()
        close(peer)
        loop.shutdown()
        #expect(thread.join())
    }

    @Test("run() racing hops onto the idle loop from another thread waits for them instead of trapping")
    func runRacingHopsNeverTraps() async {
        // Before hops were visits, a hop that found the loop idle held it as a driver, and a run()
        // starting at that moment failed "called on a second thread while another thread drives
        // the loop".
        await #expect(processExitsWith: .success) {
            for _ in 0..<200 {
                let loop = EventLoop()
                let hops = DispatchGroup()
                DispatchQueue.global().async(group: hops) {
                    for _ in 0..<50 { _ = loop.sleep(for: .seconds(3600)) }
                }
                let thread = LoopThread(loop)
                hops.wait()
                precondition(thread.waitUntilRunning(), "the loop never ran")
                loop.shutdown()
                precondition(thread.join(), "the loop thread never ended")
            }
        }
    }
}
