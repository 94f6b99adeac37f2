import CTomorrowlandSupport
import Dispatch
import Foundation

/// Runs promise work on the main queue, with Tomorrowland's same-pass chaining: the executor
/// behind `.main`.
///
/// Work submitted from outside a `.main` block is posted with `DispatchQueue.main.async`. Work
/// submitted while a `.main` block runs on the main thread is not posted again: it goes to a FIFO
/// that runs right after the current block, in the same main-queue pass, each block released
/// before the next one runs. So a chain of `.main` callbacks runs in one pass, in order, and never
/// re-entrantly.
///
/// - Important: On Linux the main queue drains only while the main thread runs `dispatchMain()`,
///   a Foundation run loop, or a `TomorrowlandLoop` `EventLoop`.
public final class MainQueueExecutor: PromiseExecutor {
    /// The one main-queue executor.
    public static let shared = MainQueueExecutor()

    private init() {}

    /// The FIFO of blocks waiting for the `.main` block that is running now. Only the main
    /// thread touches it, while its thread-local drain pointer is set.
    private final class DrainQueue {
        var blocks: [@Sendable () -> Void] = []
        var index = 0
    }

    /// Runs `work` on the main queue, after the current `.main` block if one is running.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        if let raw = twl_get_main_drain_queue() {
            // Only the main thread sets the pointer, and only while it runs a `.main` block.
            Unmanaged<DrainQueue>.fromOpaque(raw).takeUnretainedValue().blocks.append(work)
            return
        }
        DispatchQueue.main.async { MainQueueExecutor.runPass(first: work) }
    }

    /// Runs `work` on the main queue once `delay` has passed.
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        let scheduled = DispatchScheduledWork(work)
        DispatchQueue.main.asyncAfter(deadline: .now() + delay.dispatchInterval) {
            MainQueueExecutor.runPass(first: scheduled.run)
        }
        return scheduled
    }

    /// True on the main thread while it runs a `.main` block.
    public var isCurrent: Bool {
        twl_is_main_thread() && twl_get_main_drain_queue() != nil
    }

    /// Runs one main-queue pass: `first`, then everything submitted meanwhile, in order.
    private static func runPass(first: @escaping @Sendable () -> Void) {
        let queue = DrainQueue()
        // Unretained: this pass keeps `queue` alive until it clears the pointer below.
        twl_set_main_drain_queue(Unmanaged.passUnretained(queue).toOpaque())
        ExecutionFlags.with(isExecutingNow: false) {
            var next: (@Sendable () -> Void)? = first
            while let block = next {
                next = nil
                block()
                if queue.index < queue.blocks.count {
                    next = queue.blocks[queue.index]
                    queue.index += 1
                }
            }
        }
        twl_set_main_drain_queue(nil)
        withExtendedLifetime(queue) {}
    }
}
