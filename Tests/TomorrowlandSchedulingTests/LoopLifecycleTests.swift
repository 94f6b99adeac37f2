import Testing
import TomorrowlandScheduling

/// Every state of the loops' lifecycle against every event, without a loop.
///
/// The table of expected transitions is written out here independently of the implementation;
/// the suite enumerates every state the cases allow (phase × holder × role) and checks each event
/// on it. `EventLoop` and `TestLoop` both run on this one state machine.
@Suite("Loop lifecycle state machine")
struct LoopLifecycleTests {
    typealias Lifecycle = LoopLifecycle
    typealias Driver = LoopLifecycle.Driver

    /// The driver, in every test.
    static let driver: Lifecycle.ThreadID = 1
    /// Another thread.
    static let other: Lifecycle.ThreadID = 2

    /// `driver` holding the loop in `role`.
    static func held(by thread: Lifecycle.ThreadID = driver, _ role: Lifecycle.Role = .drive) -> Driver {
        Driver(thread: thread, role: role)
    }

    /// Every state the cases allow: an open loop undriven or held (to drive it, or for a visit);
    /// later phases held until closed; a closed loop undriven.
    static let reachableStates: [Lifecycle] =
        [.open(nil)]
        + Lifecycle.Role.allCases.flatMap { role -> [Lifecycle] in
            [.open(held(role)), .shutdownRequested(held(role)), .shuttingDown(held(role))]
        }
        + [.closed]

    @Test("phase, driver and admission read what each state holds")
    func readings() {
        #expect(Lifecycle() == .open(nil))
        for state in Self.reachableStates {
            switch state {
            case .open(let holder):
                #expect(state.phase == .open)
                #expect(state.driver == holder)
            case .shutdownRequested(let holder):
                #expect(state.phase == .shutdownRequested)
                #expect(state.driver == holder)
            case .shuttingDown(let holder):
                #expect(state.phase == .shuttingDown)
                #expect(state.driver == holder)
            case .closed:
                #expect(state.phase == .closed)
                #expect(state.driver == nil)
            }
            // Work is admitted in every phase but closed.
            #expect(state.admitsWork == (state.phase != .closed), "\(state)")
        }
    }

    @Test("each state is reached by its path through the transitions")
    func eachStateIsReachedByItsPath() {
        var openDriven = Lifecycle()
        #expect(openDriven.claim(by: Self.driver, for: .drive) == .claimed)
        #expect(openDriven == .open(Self.held()))

        var shutdownRequested = openDriven
        _ = shutdownRequested.requestShutdown(by: Self.other)
        #expect(shutdownRequested == .shutdownRequested(Self.held()))

        var shuttingDown = Lifecycle()
        _ = shuttingDown.requestShutdown(by: Self.driver)
        #expect(shuttingDown == .shuttingDown(Self.held(.visit)))

        var closed = shuttingDown
        closed.finishTeardown(by: Self.driver)
        #expect(closed == .closed)
    }

    @Test("claim: an open undriven loop is claimed in the role asked for; otherwise the refusal names the reason")
    func claimFromEveryState() {
        for state in Self.reachableStates {
            for thread in [Self.driver, Self.other] {
                for role in Lifecycle.Role.allCases {
                    var lifecycle = state
                    let outcome = lifecycle.claim(by: thread, for: role)
                    switch state {
                    case .closed:
                        #expect(outcome == .refused(.closed))
                        #expect(lifecycle == state)
                    case .open(nil):
                        #expect(outcome == .claimed)
                        #expect(lifecycle == .open(Self.held(by: thread, role)))
                    case .open(let holder?), .shutdownRequested(let holder), .shuttingDown(let holder):
                        let expected: Lifecycle.Refusal =
                            holder.thread == thread
                            ? .drivenByCaller : holder.role == .visit ? .visitedByAnotherThread : .drivenByAnotherThread
                        #expect(outcome == .refused(expected), "\(state), \(role) by \(thread)")
                        #expect(lifecycle == state, "a refused claim changes nothing")
                    }
                }
            }
        }
    }

    @Test("release by the holder: open becomes undriven, a pending request becomes a teardown, closed stays")
    func releaseFromEveryStateButShuttingDown() {
        // Shutting down is left out: a release then is the loop's own bug (an exit test below).
        for role in Lifecycle.Role.allCases {
            var open = Lifecycle.open(Self.held(role))
            #expect(open.release(by: Self.driver) == .released)
            #expect(open == .open(nil))

            var requested = Lifecycle.shutdownRequested(Self.held(role))
            #expect(requested.release(by: Self.driver) == .tearDown)
            #expect(requested == .shuttingDown(Self.held(role)), "still held, by the caller, for the teardown")
        }

        var closed = Lifecycle.closed
        #expect(closed.release(by: Self.driver) == .alreadyClosed)
        #expect(closed == .closed)
    }

    @Test("requestShutdown from the driver, from another thread, and on an undriven loop")
    func requestShutdownFromEveryState() {
        for state in Self.reachableStates {
            for thread in [Self.driver, Self.other] {
                var lifecycle = state
                let action = lifecycle.requestShutdown(by: thread)
                switch state {
                case .open(nil):
                    #expect(action == .tearDownNow)
                    #expect(
                        lifecycle == .shuttingDown(Self.held(by: thread, .visit)),
                        "the caller holds the loop for the teardown, as a visit")
                case .open(let holder?):
                    #expect(action == (holder.thread == thread ? .tearDownAfterCurrentTask : .wakeDriver))
                    #expect(lifecycle == .shutdownRequested(holder))
                default:
                    #expect(action == ShutdownActionNone.value, "asked already, or done: \(state)")
                    #expect(lifecycle == state)
                }
            }
        }
    }

    @Test("beginRequestedTeardown: only a pending request starts a teardown; elsewhere nothing changes")
    func beginRequestedTeardownFromEveryState() {
        for state in Self.reachableStates {
            var lifecycle = state
            let begun = lifecycle.beginRequestedTeardown(by: Self.driver)
            if case .shutdownRequested(let holder) = state {
                #expect(begun)
                #expect(lifecycle == .shuttingDown(holder))
            } else {
                #expect(!begun, "\(state)")
                #expect(lifecycle == state)
            }
        }
    }

    @Test("every way into shutting down (undriven, or via a request the driver notices) is the same state")
    func everyPathIntoShuttingDownMeetsInTheSameState() {
        var betweenItems = Lifecycle.shutdownRequested(Self.held())
        #expect(betweenItems.beginRequestedTeardown(by: Self.driver) == true)
        var onRelease = Lifecycle.shutdownRequested(Self.held())
        #expect(onRelease.release(by: Self.driver) == .tearDown)
        #expect(betweenItems == .shuttingDown(Self.held()))
        #expect(onRelease == betweenItems)
    }

    @Test("finishTeardown closes a loop being torn down, whoever holds it, and leaves it undriven")
    func finishTeardownFromShuttingDown() {
        for role in Lifecycle.Role.allCases {
            var lifecycle = Lifecycle.shuttingDown(Self.held(role))
            lifecycle.finishTeardown(by: Self.driver)
            #expect(lifecycle == .closed)
            #expect(lifecycle.driver == nil)
        }
    }

    @Test("closing without a teardown (a loop destroyed unshut) closes from every state")
    func closeWithoutTeardownFromEveryState() {
        for state in Self.reachableStates {
            var lifecycle = state
            lifecycle.closeWithoutTeardown()
            #expect(lifecycle == .closed)
        }
    }

    @Test("every path from open ends closed with no driver; nothing drives or shuts it again")
    func everyShutdownPathEndsClosed() {
        // Undriven: the requester tears down.
        var undriven = Lifecycle()
        #expect(undriven.requestShutdown(by: Self.other) == .tearDownNow)
        undriven.finishTeardown(by: Self.other)
        // Driven, asked from inside: the driver tears down between two tasks.
        var fromInside = Lifecycle()
        #expect(fromInside.claim(by: Self.driver, for: .drive) == .claimed)
        #expect(fromInside.requestShutdown(by: Self.driver) == .tearDownAfterCurrentTask)
        #expect(
            fromInside.claim(by: Self.driver, for: .drive) == .refused(.drivenByCaller),
            "a nested driving call does not drive")
        #expect(fromInside.beginRequestedTeardown(by: Self.driver) == true)
        fromInside.finishTeardown(by: Self.driver)
        #expect(fromInside.release(by: Self.driver) == .alreadyClosed, "the drive then ends on a closed loop")
        // Driven, asked from outside: the driver notices when it gives the loop up.
        var fromOutside = Lifecycle()
        #expect(fromOutside.claim(by: Self.driver, for: .visit) == .claimed)
        #expect(fromOutside.requestShutdown(by: Self.other) == .wakeDriver)
        #expect(fromOutside.requestShutdown(by: Self.other) == ShutdownActionNone.value, "asked once")
        #expect(fromOutside.release(by: Self.driver) == .tearDown)
        fromOutside.finishTeardown(by: Self.driver)
        for var lifecycle in [undriven, fromInside, fromOutside] {
            #expect(lifecycle == .closed)
            #expect(lifecycle.claim(by: Self.other, for: .drive) == .refused(.closed))
            #expect(lifecycle.requestShutdown(by: Self.other) == ShutdownActionNone.value)
            #expect(lifecycle.beginRequestedTeardown(by: Self.other) == false)
            #expect(!lifecycle.admitsWork)
        }
    }

    // MARK: Invariant violations (the loops' own bugs, never a user's race)

    @Test func releaseByAThreadThatDoesNotDriveTheLoopIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle.open(LoopLifecycle.Driver(thread: 1, role: .drive))
            _ = lifecycle.release(by: 2)
        }
    }

    @Test func releaseOfAnUndrivenLoopIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle()
            _ = lifecycle.release(by: 1)
        }
    }

    @Test func releaseInTheMiddleOfATeardownIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle()
            _ = lifecycle.requestShutdown(by: 1)
            _ = lifecycle.release(by: 1)
        }
    }

    @Test func beginningARequestedTeardownOnAnotherThreadIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle.shutdownRequested(LoopLifecycle.Driver(thread: 1, role: .drive))
            _ = lifecycle.beginRequestedTeardown(by: 2)
        }
    }

    @Test func finishingATeardownOfAnOpenLoopIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle()
            _ = lifecycle.claim(by: 1, for: .drive)
            lifecycle.finishTeardown(by: 1)
        }
    }

    @Test func finishingATeardownThatWasOnlyRequestedIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle()
            _ = lifecycle.claim(by: 1, for: .drive)
            _ = lifecycle.requestShutdown(by: 1)
            lifecycle.finishTeardown(by: 1)
        }
    }

    @Test func finishingATeardownTwiceIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle()
            _ = lifecycle.requestShutdown(by: 1)
            lifecycle.finishTeardown(by: 1)
            lifecycle.finishTeardown(by: 1)
        }
    }

    @Test func finishingATeardownOnAnotherThreadIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = LoopLifecycle()
            _ = lifecycle.requestShutdown(by: 1)
            lifecycle.finishTeardown(by: 2)
        }
    }
}

/// `.none` spelled so that it cannot be read as `Optional.none`.
private enum ShutdownActionNone {
    static let value = LoopLifecycle.ShutdownAction.none
}
