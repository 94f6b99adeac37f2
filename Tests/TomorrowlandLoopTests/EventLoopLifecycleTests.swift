import Testing

@testable import TomorrowlandLoop

/// Every state of the loop's lifecycle against every event, without a loop or libevent.
///
/// The table of expected transitions is written out here independently of the implementation;
/// the suite enumerates every reachable state (phase × driver) and checks each event on it.
@Suite("EventLoop lifecycle state machine")
struct EventLoopLifecycleTests {
    typealias Lifecycle = EventLoopLifecycle
    typealias Phase = EventLoopLifecycle.Phase

    /// The driver, in every test.
    static let driver: Lifecycle.ThreadID = 1
    /// Another thread.
    static let other: Lifecycle.ThreadID = 2

    /// Every state the invariants allow: an open loop undriven or held (to drive it, or for a
    /// visit); later phases held until closed; a closed loop undriven.
    static let reachableStates: [Lifecycle] =
        [Lifecycle(phase: .open, driver: nil)]
        + [Phase.open, .shutdownRequested, .shuttingDown].flatMap { phase in
            Lifecycle.Role.allCases.map { Lifecycle(phase: phase, driver: driver, role: $0) }
        }
        + [Lifecycle(phase: .closed, driver: nil)]

    @Test("claim: an open undriven loop is claimed in the role asked for; otherwise the refusal names the reason")
    func claimFromEveryState() {
        for state in Self.reachableStates {
            for thread in [Self.driver, Self.other] {
                for role in Lifecycle.Role.allCases {
                    var lifecycle = state
                    let outcome = lifecycle.claim(by: thread, for: role)
                    switch (state.phase, state.driver) {
                    case (.closed, _):
                        #expect(outcome == .refused(.closed))
                        #expect(lifecycle == state)
                    case (.open, nil):
                        #expect(outcome == .claimed)
                        #expect(lifecycle == Lifecycle(phase: .open, driver: thread, role: role))
                    case (_, let holder?):
                        let expected: Lifecycle.Refusal =
                            holder == thread
                            ? .drivenByCaller : state.role == .visit ? .visitedByAnotherThread : .drivenByAnotherThread
                        #expect(outcome == .refused(expected), "\(state), \(role) by \(thread)")
                        #expect(lifecycle == state, "a refused claim changes nothing")
                    default:
                        Issue.record("unreachable state \(state)")
                    }
                }
            }
        }
    }

    @Test("release by the holder: open becomes undriven, a pending request becomes a teardown")
    func releaseFromEveryDrivenState() {
        for role in Lifecycle.Role.allCases {
            var open = Lifecycle(phase: .open, driver: Self.driver, role: role)
            #expect(open.release(by: Self.driver) == .released)
            #expect(open == Lifecycle(phase: .open, driver: nil))

            var requested = Lifecycle(phase: .shutdownRequested, driver: Self.driver, role: role)
            #expect(requested.release(by: Self.driver) == .tearDown)
            #expect(
                requested == Lifecycle(phase: .shuttingDown, driver: Self.driver, role: role),
                "still held, for the teardown")
        }

        var closed = Lifecycle(phase: .closed, driver: nil)
        #expect(closed.release(by: Self.driver) == .alreadyClosed)
        #expect(closed == Lifecycle(phase: .closed, driver: nil))
    }

    @Test("requestShutdown from the driver, from another thread, and on an undriven loop")
    func requestShutdownFromEveryState() {
        for state in Self.reachableStates {
            for thread in [Self.driver, Self.other] {
                var lifecycle = state
                let action = lifecycle.requestShutdown(by: thread)
                switch (state.phase, state.driver) {
                case (.open, nil):
                    #expect(action == .tearDownNow)
                    #expect(
                        lifecycle == Lifecycle(phase: .shuttingDown, driver: thread, role: .visit),
                        "the caller holds the loop for the teardown, as a visit")
                case (.open, let holder?):
                    #expect(action == (holder == thread ? .tearDownAfterCurrentTask : .wakeDriver))
                    #expect(lifecycle == Lifecycle(phase: .shutdownRequested, driver: holder, role: state.role))
                default:
                    #expect(action == ShutdownActionNone.value, "asked already, or done: \(state)")
                    #expect(lifecycle == state)
                }
            }
        }
    }

    @Test("beginTeardown and finishTeardown walk a requested shutdown to closed")
    func teardownSteps() {
        var lifecycle = Lifecycle(phase: .shutdownRequested, driver: Self.driver)
        lifecycle.beginTeardown(by: Self.driver)
        #expect(lifecycle == Lifecycle(phase: .shuttingDown, driver: Self.driver))
        lifecycle.finishTeardown(by: Self.driver)
        #expect(lifecycle == Lifecycle(phase: .closed, driver: nil))
    }

    @Test("work is admitted in every phase but closed")
    func admission() {
        for state in Self.reachableStates {
            #expect(state.admitsWork == (state.phase != .closed), "\(state)")
        }
    }

    @Test("closing without a teardown (a loop destroyed unshut) closes from every state")
    func closeWithoutTeardownFromEveryState() {
        for state in Self.reachableStates {
            var lifecycle = state
            lifecycle.closeWithoutTeardown()
            #expect(lifecycle == Lifecycle(phase: .closed, driver: nil))
        }
    }

    @Test("every path from open ends closed with no driver, and no claim succeeds after")
    func everyShutdownPathEndsClosed() {
        // Undriven: the requester tears down.
        var undriven = Lifecycle()
        #expect(undriven.requestShutdown(by: Self.other) == .tearDownNow)
        undriven.finishTeardown(by: Self.other)
        // Driven, asked from inside: the driver tears down between two tasks.
        var fromInside = Lifecycle()
        #expect(fromInside.claim(by: Self.driver, for: .drive) == .claimed)
        #expect(fromInside.requestShutdown(by: Self.driver) == .tearDownAfterCurrentTask)
        fromInside.beginTeardown(by: Self.driver)
        fromInside.finishTeardown(by: Self.driver)
        #expect(fromInside.release(by: Self.driver) == .alreadyClosed)
        // Driven, asked from outside: the driver notices when it gives the loop up.
        var fromOutside = Lifecycle()
        #expect(fromOutside.claim(by: Self.driver, for: .visit) == .claimed)
        #expect(fromOutside.requestShutdown(by: Self.other) == .wakeDriver)
        #expect(fromOutside.requestShutdown(by: Self.other) == ShutdownActionNone.value, "asked once")
        #expect(fromOutside.release(by: Self.driver) == .tearDown)
        fromOutside.finishTeardown(by: Self.driver)
        for var lifecycle in [undriven, fromInside, fromOutside] {
            #expect(lifecycle == Lifecycle(phase: .closed, driver: nil))
            #expect(lifecycle.claim(by: Self.other, for: .drive) == .refused(.closed))
            #expect(!lifecycle.admitsWork)
        }
    }

    // MARK: Invariant violations (the loop's own bugs, never a user's race)

    @Test func releaseByAThreadThatDoesNotDriveTheLoopIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = EventLoopLifecycle(phase: .open, driver: 1)
            _ = lifecycle.release(by: 2)
        }
    }

    @Test func releaseInTheMiddleOfATeardownIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = EventLoopLifecycle(phase: .shuttingDown, driver: 1)
            _ = lifecycle.release(by: 1)
        }
    }

    @Test func beginningATeardownNobodyAskedForIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = EventLoopLifecycle(phase: .open, driver: 1)
            lifecycle.beginTeardown(by: 1)
        }
    }

    @Test func finishingATeardownThatDidNotBeginIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = EventLoopLifecycle(phase: .shutdownRequested, driver: 1)
            lifecycle.finishTeardown(by: 1)
        }
    }
}

/// `.none` spelled so that it cannot be read as `Optional.none`.
private enum ShutdownActionNone {
    static let value = EventLoopLifecycle.ShutdownAction.none
}
