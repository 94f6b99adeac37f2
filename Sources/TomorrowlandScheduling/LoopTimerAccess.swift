import Tomorrowland

/// How the timer handles of this module (``LoopTimerHandle``, ``LoopTimerReference``) reach the
/// timers of one kind of loop: `EventLoop`'s, `NIOEventLoopExecutor`'s, `TestLoop`'s. Each
/// requirement is one line of the loop's own code; what a cancel does with them is written once,
/// in the handles.
///
/// A type of its own (an internal enum in the loop's module), not a conformance of the loop: a
/// public class's conformance to a protocol of this module would have to be public, and this
/// module is imported `package` or `internal` only. `@usableFromInline` for
/// ``LoopTimerReference``'s inlinable cancel; `SendableMetatype` because a hop's body calls it
/// from the loop's thread.
@usableFromInline
package protocol LoopTimerAccess: SendableMetatype {
    /// The loop that holds the timers.
    associatedtype Loop: AnyObject & Sendable

    /// Whether the calling thread may touch `loop`'s timers now: on the loop's thread; from any
    /// thread for a loop whose timers sit under its lock (`TestLoop`).
    static func reachesTimers(of loop: Loop) -> Bool

    /// Removes the timer `id` from `loop`, if it is still there, and releases its work (outside
    /// any lock: its deinitializers may call back into the loop). Only where
    /// ``reachesTimers(of:)`` is true.
    static func removeTimer(_ id: PromiseTimerID, from loop: Loop)

    /// Runs `body` on the loop's thread, later, quietly (it never visits an idle loop, and its
    /// refusal is not reported): a cancel from another thread. Once the loop has shut down (it
    /// released every timer then), or is gone, `body` is released unrun. Only where
    /// ``reachesTimers(of:)`` is false.
    static func hop(to loop: Loop, _ body: @escaping @Sendable () -> Void)
}
