import Tomorrowland
internal import TomorrowlandScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// How the loop moves through its `LoopLifecycle`: every driver claim, release and shutdown
/// request goes through these functions, under the inbox lock.
extension EventLoop {
    /// The one driver-claim primitive: makes the calling thread the loop's driver if no thread
    /// drives it and it is not closed.
    ///
    /// The lock's acquire hands the loop-confined state over from the previous driver, whose
    /// ``releaseDriver()`` released it under the same lock.
    func tryClaimDriver(for role: LoopLifecycle.Role) -> LoopLifecycle.ClaimOutcome {
        let me = LoopLifecycle.currentThread
        return inbox.withLock { $0.lifecycle.claim(by: me, for: role) }
    }

    /// Claims the driver role for a public driving call (`operation`): false after shutdown.
    ///
    /// A visit in progress (another thread's hop onto the idle loop, or its shutdown of it) is
    /// waited out: it is short, and a `run()` racing a hop is no misuse. Misuse (a second thread
    /// driving, or the loop's own work driving it again) is a precondition failure that says
    /// what to do instead.
    func claimDriver(_ operation: StaticString) -> Bool {
        backend.dynamic.checkCanBeDriven(operation)
        while true {
            switch tryClaimDriver(for: .drive) {
            case .claimed:
                return true
            case .refused(.closed):
                return false
            case .refused(.visitedByAnotherThread):
                sched_yield()
                continue
            case .refused(.drivenByCaller):
                preconditionFailure(
                    "EventLoop.\(operation) called from inside the loop's own work; the loop is already running on this thread: submit work with execute(_:) instead of driving the loop again"
                )
            case .refused(.drivenByAnotherThread):
                preconditionFailure(
                    "EventLoop.\(operation) called on a second thread while another thread drives the loop; a loop is driven by one thread at a time: submit work with execute(_:), or stop() the loop before driving it elsewhere"
                )
            }
        }
    }

    /// Gives up the driver role. If another thread asked for shutdown meanwhile, the caller is
    /// still the driver and tears the loop down first, on this thread.
    func releaseDriver() {
        let me = LoopLifecycle.currentThread
        let action = inbox.withLock { $0.lifecycle.release(by: me) }
        // After `.released` the loop-confined state belongs to the next driver: touch nothing.
        if action == .tearDown {
            ExecutionFlags.running(on: self) { tearDown() }
        }
    }

    /// Tears the loop down after a request this driver noticed between two tasks (its own, or
    /// another thread's that ``takeInbox()`` brought in).
    func tearDownAsRequested() {
        let me = LoopLifecycle.currentThread
        let begun = inbox.withLock { $0.lifecycle.beginRequestedTeardown(by: me) }
        precondition(begun, "EventLoop: teardown begun without a request")
        tearDown()
    }

    /// Whether ``shutdown()`` has completed.
    ///
    /// Safe from any thread.
    public var isShutdownComplete: Bool {
        inbox.withLock { $0.lifecycle.phase == .closed }
    }
}
