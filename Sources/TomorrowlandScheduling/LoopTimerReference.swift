import Tomorrowland

/// The handle of a loop timer that needs no state of its own: the loop and the timer's
/// identifier. What `TestLoop.schedule(after:_:)` returns, what `NIOEventLoopExecutor`'s
/// `scheduleSelfGuarded(after:_:)` returns on the loop's thread, and what `cancelStoredTimer(_:)`
/// cancels with.
///
/// Its `cancel()` removes the timer and releases its work where the loop's timers are reachable
/// (``LoopTimerAccess/reachesTimers(of:)``), and hops to the loop's thread to do so from anywhere
/// else; the work may start meanwhile, so only work that checks by itself whether it is still
/// wanted, or a loop that reaches its timers from any thread, uses this handle. A stale
/// identifier (the timer ran or was removed, even if its slot was reused since) removes nothing.
///
/// Three words (the loop, and the identifier's slot and sequence), which fit an existential's
/// inline buffer: returned as `any PromiseScheduledWork`, it allocates nothing.
///
/// Inlinable, so that a loop's `cancelStoredTimer(_:)` (every promise timer cancelled on the
/// loop's thread) gets ``cancel()`` specialized for its access: a thread check, then the removal.
@usableFromInline
package struct LoopTimerReference<Access: LoopTimerAccess>: PromiseScheduledWork {
    /// The loop that holds the timer.
    @usableFromInline package let loop: Access.Loop
    /// The timer's place in the loop's timers.
    @usableFromInline package let id: PromiseTimerID

    /// A reference to the timer `id` of `loop`.
    @inlinable
    package init(loop: Access.Loop, id: PromiseTimerID) {
        self.loop = loop
        self.id = id
    }

    /// Removes the timer, if it is still pending, and releases its work. Safe from any thread;
    /// does nothing after the timer ran or was cancelled, or the loop shut down.
    @inlinable
    @inline(__always)
    package func cancel() {
        if Access.reachesTimers(of: loop) {
            Access.removeTimer(id, from: loop)
            return
        }
        hopToCancel()
    }

    /// ``cancel()`` from a thread that does not reach the loop's timers: out of line, so that the
    /// inlined cancel on the loop's thread carries none of the hop's setup.
    @inlinable
    @inline(never)
    func hopToCancel() {
        let id = id
        let target = WeakLoop(loop)
        Access.hop(to: loop) {
            guard let loop = target.loop else { return }
            Access.removeTimer(id, from: loop)
        }
    }

    /// The loop, held weakly: a hop may wait in the loop's own queue, which must not keep the
    /// loop alive. A value captured as it is, because a `[weak loop]` capture is a box of its
    /// own, one more allocation per hop.
    @usableFromInline
    struct WeakLoop: Sendable {
        /// The loop; nil once it is gone.
        @usableFromInline weak var loop: Access.Loop?

        // Borrowed: an owned parameter would retain the loop before `cancel()` knows it hops,
        // on the loop's thread too.
        @inlinable
        init(_ loop: borrowing Access.Loop) {
            self.loop = copy loop
        }
    }
}
