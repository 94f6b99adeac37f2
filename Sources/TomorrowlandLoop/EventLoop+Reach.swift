import Dispatch
import Tomorrowland
internal import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

// The two ways code reaches a loop's confined state from wherever it runs. Both keep
// LoopInvariants "Loop confinement": the work runs on the loop's thread, or on a thread that
// holds the loop's driver role for the call.

extension EventLoop {
    /// Runs `body` on the loop's thread without waiting for it; returns false, releasing `body`
    /// unrun, once the loop is shut down (quietly: no diagnostic, the caller reports what it
    /// must).
    ///
    /// - Parameters:
    ///   - runsInlineWhenPossible: true runs `body` inside this call when that is allowed: on the
    ///     loop's thread, or on this thread when the loop owns its base and no thread drives it
    ///     (a visit: this thread holds the driver role for the call). A borrowed base may be
    ///     inside the host's `event_base_loop` with no driver claimed, so it is never visited.
    ///     False always queues `body`, even on the loop's thread: for work that must never run
    ///     inside the caller's call (`submit`, input delivered later), or that only tidies up
    ///     after the caller (cancelling a timer from another thread).
    ///   - body: The work, run on the loop's thread (or the visiting thread).
    /// - Returns: Whether `body` ran or was queued.
    @discardableResult
    @inline(__always)
    func submitOnLoop(runsInlineWhenPossible: Bool = false, _ body: @escaping @Sendable () -> Void) -> Bool {
        runsInlineWhenPossible ? runInlineOrQueue(body) : queueIfOpen(body)
    }

    /// Runs `body` with the loop's confined state, from any thread, and returns what it returned:
    /// on the loop's thread at once; while no thread drives the loop, on the calling thread, which
    /// claims the driver role for the call (a borrowed base too: the host must not run its base
    /// meanwhile, as ``watch(fileDescriptor:for:_:)`` documents); while another thread drives it,
    /// on the loop's thread through the inbox, the caller waiting.
    ///
    /// Accepted work always runs if the loop is driven (shutdown drains it too), so the wait ends;
    /// a loop paused with ``stop()`` before it took the work makes the caller wait until it is
    /// driven again. After the loop shut down `body` does not run and this returns `refusal`: the
    /// resources are closed, their state is final, and no thread may claim the loop any more to
    /// touch it. A throwing caller returns a `Result` and calls `get()` on what this returns.
    ///
    /// - Parameter operation: The calling API, for the reader of a stack trace.
    func withConfinedState<R>(
        _ operation: StaticString, ifShutDown refusal: @autoclosure () -> R, _ body: @escaping () -> R
    ) -> R {
        if inEventLoop { return body() }
        claim: while true {
            switch tryClaimDriver(for: .visit) {
            case .claimed:
                defer { releaseDriver() }
                return ExecutionFlags.running(on: self) { body() }
            case .refused(.closed):
                // Running `body` here, on the calling thread, would give two callers after
                // shutdown no exclusion at all. LoopInvariants "Loop confinement": after shutdown
                // nobody claims the loop, so the confined state is touched by no thread but the
                // one that tore it down.
                return refusal()
            case .refused(.visitedByAnotherThread):
                // Handed to the inbox now, the work could wait for a driver that never comes
                // (the visitor leaves the loop idle): wait for the visit to end instead.
                sched_yield()
            case .refused(.drivenByCaller):
                // This thread drives the loop, from inside another loop's work that runs nested in
                // it: the loop's state is this thread's already, and waiting would wait for itself.
                return ExecutionFlags.running(on: self) { body() }
            case .refused(.drivenByAnotherThread):
                break claim
            }
        }
        // `UnsafeTransfer`: `body` touches loop-confined state and runs only on the loop's
        // thread; its result comes back to this thread, which waits for it.
        let call = UnsafeTransfer(body)
        let outcome = HopOutcome<UnsafeTransfer<R>>()
        guard queueIfOpen({ outcome.deliver(UnsafeTransfer(call.wrapped())) }) else { return refusal() }
        return outcome.wait().wrapped
    }

    /// ``withConfinedState(_:ifShutDown:_:)`` for an operation that has nothing to do after
    /// shutdown: `body` does not run then.
    func withConfinedState(_ operation: StaticString, _ body: @escaping () -> Void) {
        withConfinedState(operation, ifShutDown: (), body)
    }

    // MARK: Internals

    /// ``submitOnLoop(runsInlineWhenPossible:_:)`` with `true`.
    private func runInlineOrQueue(_ body: @escaping @Sendable () -> Void) -> Bool {
        if inEventLoop {
            if isShutDown { return false }
            body()
            return true
        }
        // A backend without visits (a borrowed base may be inside the host's `event_base_loop` on
        // another thread even when no thread holds `driver`; a simulated host runs in the
        // network's order): only hop there.
        if backend.dynamic.admitsVisitsWhileUndriven, tryClaimDriver(for: .visit) == .claimed {
            defer { releaseDriver() }
            ExecutionFlags.running(on: self) { body() }
            return true
        }
        return queueIfOpen(body)
    }

    /// ``submitOnLoop(runsInlineWhenPossible:_:)`` with `false`.
    private func queueIfOpen(_ body: @escaping @Sendable () -> Void) -> Bool {
        if inEventLoop {
            if isShutDown { return false }
            core.enqueue(.closure(body))
            return true
        }
        return appendToInbox { $0.work.append(.closure(body)) }
    }
}

/// The result of work ``EventLoop/withConfinedState(_:ifShutDown:_:)`` handed to the loop, and
/// the wait for it.
private final class HopOutcome<Value: Sendable>: Sendable {
    private let slot = LockedValue<Value?>(nil)
    private let delivered = DispatchSemaphore(value: 0)

    /// On the loop's thread: stores the outcome and wakes the waiting thread.
    func deliver(_ value: Value) {
        slot.withLock { $0 = value }
        delivered.signal()
    }

    /// Blocks until ``deliver(_:)``; the semaphore's signal/wait order publishes the slot.
    func wait() -> Value {
        delivered.wait()
        return slot.withLock { $0.take()! }
    }
}
