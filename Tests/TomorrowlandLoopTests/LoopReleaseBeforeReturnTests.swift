import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

/// B7 on a running `EventLoop` when the callback wins the race with its own registration: a
/// thread registers `.loop` callbacks on promises that are already resolved, the loop's thread
/// runs each one at once, and the last reference to each closure must still be released on the
/// loop's thread, not by the registering thread as the call returns.
@Suite("Release on the loop of callbacks that run before their registration returns")
struct LoopReleaseBeforeReturnTests {
    typealias IntPromise = Promise<Int, String>

    /// Counts the deaths of the spies it hands out, and those that happened off the loop.
    final class Deaths: Sendable {
        let loop: EventLoop
        let total = Atomic<Int>(0)
        let offLoop = Atomic<Int>(0)

        init(loop: EventLoop) { self.loop = loop }

        /// `body`, in a closure that also holds a new spy: its context holds the only reference
        /// to the spy (a closure literal's capture list would hold it too in a debug build).
        func holding<Input, Output>(
            _ body: @escaping @Sendable (Input) -> Output
        ) -> @Sendable (Input) -> Output {
            let spy = Spy(self)
            return { input in
                spy.touch()
                return body(input)
            }
        }
    }

    /// Records, in its deinit, whether it died on the loop's thread.
    final class Spy: Sendable {
        let deaths: Deaths
        init(_ deaths: Deaths) { self.deaths = deaths }
        func touch() {}
        deinit {
            if !deaths.loop.inEventLoop { deaths.offLoop.add(1, ordering: .relaxed) }
            deaths.total.add(1, ordering: .releasing)
        }
    }

    static func waitUntil(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }

    @Test("callbacks that ran on the loop before their registration returned are released on the loop (B7)")
    func releasedOnLoop() {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let deaths = Deaths(loop: loop)
        let context = PromiseContext.loop(loop)
        let iterations = 2000
        runConcurrently(1) { _ in
            for _ in 0..<iterations {
                let promise = IntPromise(fulfilled: 1)
                promise.always(on: context, deaths.holding { _ in })
                _ = promise.map(on: context, deaths.holding { $0 + 1 })
                promise.tap(on: context, deaths.holding { _ in })
            }
        }
        let expected = 3 * iterations
        #expect(Self.waitUntil { deaths.total.load(ordering: .acquiring) == expected })
        loop.stop()
        #expect(thread.join())
        let offLoop = deaths.offLoop.load(ordering: .relaxed)
        #expect(offLoop == 0, "\(offLoop) of \(expected) .loop callbacks were released off the loop's thread")
    }
}
