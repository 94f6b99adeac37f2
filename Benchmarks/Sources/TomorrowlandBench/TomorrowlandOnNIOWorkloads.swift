import NIOCore
import Tomorrowland
import TomorrowlandNIO

/// The ours@NIO rows: our promises on `.nio(loop)` (TomorrowlandNIO), on the very NIO loop and
/// thread that NIO's side of the run uses. W1, W2, W3, W4, W7 and W8, the same code as on our
/// `EventLoop` (``PromiseWorkloads``); W4's separate task per link is NIO's `execute`, as on
/// NIO's side.
///
/// This is the cleanest comparison of the two promise cores: the same loop, the same thread, the
/// same workload. What remains different is that NIO runs a future's callbacks inside `succeed`
/// while ours always hop through the executor (a callback on a loop context never runs inside
/// the resolving call).
enum TomorrowlandOnNIOWorkloads {
    static func make(on nioLoop: NIOLoopThread) -> LibraryUnderTest {
        let loop = NIOWorkloadLoop(loop: nioLoop.loop)
        let workloads = PromiseWorkloads.make(
            loop: loop, context: .nio(nioLoop.loop), counter: Counter(), label: "ours@NIO")
        return LibraryUnderTest(
            name: "Tomorrowland@NIO",
            loopCPUClock: nioLoop.cpuClock,
            workloads: workloads,
            // The loop belongs to the `NIOLoopThread`, which the caller shuts down.
            shutdown: {},
            measurePendingPromiseMemory: nil)
    }
}

/// A NIO loop as a ``WorkloadLoop``: a task is NIO's `execute`.
struct NIOWorkloadLoop: WorkloadLoop {
    let loop: any EventLoop

    func enqueueTask(_ work: @escaping @Sendable () -> Void) {
        loop.execute(work)
    }
}
