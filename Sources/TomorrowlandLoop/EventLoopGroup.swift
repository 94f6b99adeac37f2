import Dispatch
import Foundation
import Synchronization
import Tomorrowland

/// A fixed set of ``EventLoop``s, each driven by a thread of its own: how a server uses more than
/// one core.
///
/// Hand out loops with ``next()`` (round-robin); each loop keeps the single-threaded rules (its
/// work runs on its own thread, in order). End the group with ``syncShutdownGracefully()``,
/// ``shutdownGracefully()`` or ``shutdownGracefully(queue:_:)``: a group that is never shut down
/// keeps its threads (and their loops) until the process exits.
public final class EventLoopGroup: Sendable {
    /// The group's loops, in creation order.
    public let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)
    /// Left by each thread once its loop has shut down and the thread is about to exit.
    private let threadsDone = DispatchGroup()

    /// Wraps loops that their backend drives (a simulated host's): no thread is started.
    /// Shutting the group down shuts the loops down on the calling thread (the simulation's).
    package init(externallyDrivenLoops loops: [EventLoop]) {
        precondition(!loops.isEmpty && loops.allSatisfy(\.backend.dynamic.isDrivenExternally))
        self.loops = loops
    }

    /// Starts `loopCount` loops, each on its own new thread, running until the group shuts down.
    ///
    /// A `stop()` on one of the loops only makes its thread drive it again; shut the group down
    /// to end the threads.
    ///
    /// - Parameter loopCount: How many loops and threads; at least 1. One per core is usual.
    public init(loopCount: Int) {
        precondition(loopCount >= 1, "EventLoopGroup(loopCount:) needs at least one loop")
        loops = (0..<loopCount).map { _ in EventLoop() }
        for (index, loop) in loops.enumerated() {
            threadsDone.enter()
            let thread = Thread { [threadsDone] in
                while loop.runUnlessShutDown() {}
                threadsDone.leave()
            }
            thread.name = "TomorrowlandLoop-\(index)"
            thread.start()
        }
    }

    /// The next loop, round-robin. Safe from any thread.
    public func next() -> EventLoop {
        let index = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// Shuts every loop down (see ``EventLoop/shutdown()``: pending work runs, timers are cancelled,
    /// watchers removed) and blocks until every thread of the group has exited.
    ///
    /// - Important: Calling this from one of the group's own loops would wait for itself: a
    ///   precondition failure. Use ``shutdownGracefully(queue:_:)`` there.
    public func syncShutdownGracefully() {
        precondition(
            !loops.contains(where: { $0.inEventLoop }),
            "EventLoopGroup.syncShutdownGracefully() called on one of the group's own loops, which would wait for itself; use shutdownGracefully(queue:_:)"
        )
        for loop in loops { loop.shutdown() }
        threadsDone.wait()
    }

    /// Shuts every loop down and returns a promise fulfilled once every thread of the group has
    /// exited.
    ///
    /// Returns at once; safe from any thread, including the group's own loops. The promise is
    /// fulfilled on a Dispatch global queue, so register callbacks on a context that outlives the
    /// group (not on one of its loops).
    public func shutdownGracefully() -> Promise<Void, NoError> {
        let (promise, resolver) = Promise<Void, NoError>.makeWithResolver()
        shutdownGracefully(queue: .global()) { resolver.fulfill(with: ()) }
        return promise
    }

    /// Shuts every loop down and calls `callback` on `queue` once every thread has exited.
    ///
    /// Returns at once; safe from any thread, including the group's own loops.
    ///
    /// - Parameters:
    ///   - queue: Where `callback` runs.
    ///   - callback: Called once, after the last thread exits.
    @preconcurrency
    public func shutdownGracefully(queue: DispatchQueue = .global(), _ callback: @escaping @Sendable () -> Void) {
        for loop in loops { loop.shutdown() }
        threadsDone.notify(queue: queue, execute: callback)
    }

    /// Calls `callback` on `queue` once every thread of the group has exited, without shutting
    /// anything down: for a supervisor (TomorrowlandServiceLifecycle's service) that must notice a
    /// shutdown requested elsewhere. Safe from any thread.
    package func notifyWhenThreadsExit(queue: DispatchQueue, _ callback: @escaping @Sendable () -> Void) {
        threadsDone.notify(queue: queue, execute: callback)
    }
}
