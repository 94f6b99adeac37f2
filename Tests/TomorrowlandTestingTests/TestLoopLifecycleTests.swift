import Testing

@testable import TomorrowlandTesting

/// Every state of the test loop's lifecycle against every event, without a loop.
///
/// The expected transitions are written out here from the table in `TestLoopLifecycle`'s
/// documentation, independently of the implementation; the suite builds every reachable state
/// (phase × driven) through the transitions themselves (the type has no initializer that takes a
/// state) and checks each event on each of them.
@Suite("TestLoop lifecycle state machine")
struct TestLoopLifecycleTests {
    typealias Lifecycle = TestLoopLifecycle
    typealias Phase = TestLoopLifecycle.Phase

    /// What a state should be: its phase, and whether a call drives the loop.
    struct Expected: Equatable, CustomStringConvertible {
        var phase: Phase
        var isDriven: Bool

        init(_ phase: Phase, driven isDriven: Bool) {
            self.phase = phase
            self.isDriven = isDriven
        }

        init(_ lifecycle: Lifecycle) {
            self.init(lifecycle.phase, driven: lifecycle.isDriven)
        }

        var description: String { "\(phase), \(isDriven ? "driven" : "undriven")" }
    }

    /// An open loop that no call drives.
    static var openUndriven: Lifecycle { Lifecycle() }

    /// An open loop that a call drives.
    static var openDriven: Lifecycle {
        var lifecycle = Lifecycle()
        _ = lifecycle.claim()
        return lifecycle
    }

    /// Shutdown asked for while a call drives the loop.
    static var shutdownRequested: Lifecycle {
        var lifecycle = openDriven
        _ = lifecycle.requestShutdown()
        return lifecycle
    }

    /// Being torn down by the call that asked for shutdown on an undriven loop.
    static var shuttingDown: Lifecycle {
        var lifecycle = Lifecycle()
        _ = lifecycle.requestShutdown()
        return lifecycle
    }

    /// Shut down for good.
    static var closed: Lifecycle {
        var lifecycle = shuttingDown
        lifecycle.finishTeardown()
        return lifecycle
    }

    /// Every state the invariants allow, once each.
    static var reachableStates: [Lifecycle] {
        [openUndriven, openDriven, shutdownRequested, shuttingDown, closed]
    }

    @Test("the reachable states are the five the invariants allow, each reached by its path")
    func reachableStatesAreTheFiveTheInvariantsAllow() {
        #expect(
            Self.reachableStates.map(Expected.init) == [
                Expected(.open, driven: false), Expected(.open, driven: true),
                Expected(.shutdownRequested, driven: true), Expected(.shuttingDown, driven: true),
                Expected(.closed, driven: false),
            ])
        // Invariants: a loop that is not open is driven until it is closed; a closed loop is not.
        for state in Self.reachableStates where state.phase != .open {
            #expect(state.isDriven == (state.phase != .closed), "\(Expected(state))")
        }
    }

    @Test("every way into shutting down (undriven, or via a request the driver notices) is the same state")
    func everyPathIntoShuttingDownMeetsInTheSameState() {
        var betweenItems = Self.shutdownRequested
        #expect(betweenItems.beginRequestedTeardown() == true)
        var onRelease = Self.shutdownRequested
        #expect(onRelease.release() == true)
        #expect(betweenItems == Self.shuttingDown)
        #expect(onRelease == Self.shuttingDown)
    }

    @Test("claim: an open undriven loop is claimed; a driven loop and a closed one refuse, unchanged")
    func claimFromEveryState() {
        for state in Self.reachableStates {
            var lifecycle = state
            let outcome = lifecycle.claim()
            switch Expected(state) {
            case Expected(.open, driven: false):
                #expect(outcome == .claimed)
                #expect(Expected(lifecycle) == Expected(.open, driven: true))
            case Expected(.closed, driven: false):
                #expect(outcome == .closed)
                #expect(lifecycle == state)
            default:
                #expect(outcome == .alreadyDriven, "\(Expected(state))")
                #expect(lifecycle == state, "a refused claim changes nothing: \(Expected(state))")
            }
        }
    }

    @Test("release: an open loop becomes undriven; a pending request becomes the driver's teardown")
    func releaseFromEveryStateButShuttingDown() {
        // Shutting down is left out: a release then is the loop's own bug (an exit test below).
        for state in Self.reachableStates where state.phase != .shuttingDown {
            var lifecycle = state
            let mustTearDown = lifecycle.release()
            switch state.phase {
            case .open:
                #expect(!mustTearDown)
                #expect(Expected(lifecycle) == Expected(.open, driven: false), "from \(Expected(state))")
            case .shutdownRequested:
                #expect(mustTearDown)
                #expect(
                    Expected(lifecycle) == Expected(.shuttingDown, driven: true),
                    "still driven, by the caller, for the teardown")
            case .closed:
                #expect(!mustTearDown)
                #expect(lifecycle == state)
            case .shuttingDown:
                Issue.record("left out above")
            }
        }
    }

    @Test("requestShutdown: undriven, the caller tears down; driven, the driver does; later, nothing")
    func requestShutdownFromEveryState() {
        for state in Self.reachableStates {
            var lifecycle = state
            let action = lifecycle.requestShutdown()
            switch Expected(state) {
            case Expected(.open, driven: false):
                #expect(action == .tearDownNow)
                #expect(
                    Expected(lifecycle) == Expected(.shuttingDown, driven: true),
                    "the caller drives the loop for the teardown")
            case Expected(.open, driven: true):
                #expect(action == .driverTearsDown)
                #expect(Expected(lifecycle) == Expected(.shutdownRequested, driven: true))
            default:
                #expect(action == ShutdownActionNone.value, "asked already, or done: \(Expected(state))")
                #expect(lifecycle == state)
            }
        }
    }

    @Test("beginRequestedTeardown: only a pending request starts a teardown; elsewhere nothing changes")
    func beginRequestedTeardownFromEveryState() {
        for state in Self.reachableStates {
            var lifecycle = state
            let begun = lifecycle.beginRequestedTeardown()
            if state.phase == .shutdownRequested {
                #expect(begun)
                #expect(Expected(lifecycle) == Expected(.shuttingDown, driven: true))
            } else {
                #expect(!begun, "\(Expected(state))")
                #expect(lifecycle == state)
            }
        }
    }

    @Test("finishTeardown closes a loop being torn down, and leaves it undriven")
    func finishTeardownFromShuttingDown() {
        var lifecycle = Self.shuttingDown
        lifecycle.finishTeardown()
        #expect(Expected(lifecycle) == Expected(.closed, driven: false))
        #expect(lifecycle == Self.closed)
    }

    @Test("work is admitted in every phase but closed")
    func admission() {
        for state in Self.reachableStates {
            #expect(state.admitsWork == (state.phase != .closed), "\(Expected(state))")
        }
    }

    @Test("every shutdown path from open ends closed and undriven; nothing drives or shuts it again")
    func everyShutdownPathEndsClosed() {
        // Undriven: the caller of shutdown() tears down.
        var undriven = Lifecycle()
        #expect(undriven.requestShutdown() == .tearDownNow)
        undriven.finishTeardown()
        // Driven, asked from the driving call's own work: the driver tears down between items.
        var betweenItems = Lifecycle()
        #expect(betweenItems.claim() == .claimed)
        #expect(betweenItems.requestShutdown() == .driverTearsDown)
        #expect(betweenItems.claim() == .alreadyDriven, "a nested driving call does not drive")
        #expect(betweenItems.beginRequestedTeardown() == true)
        betweenItems.finishTeardown()
        #expect(betweenItems.release() == false, "the driving call then ends on a closed loop")
        // Driven, asked from another thread after the driver last looked: it tears down on release.
        var onRelease = Lifecycle()
        #expect(onRelease.claim() == .claimed)
        #expect(onRelease.requestShutdown() == .driverTearsDown)
        #expect(onRelease.requestShutdown() == ShutdownActionNone.value, "asked once")
        #expect(onRelease.release() == true)
        onRelease.finishTeardown()
        for var lifecycle in [undriven, betweenItems, onRelease] {
            #expect(Expected(lifecycle) == Expected(.closed, driven: false))
            #expect(lifecycle.claim() == .closed)
            #expect(lifecycle.requestShutdown() == ShutdownActionNone.value)
            #expect(lifecycle.beginRequestedTeardown() == false)
            #expect(!lifecycle.admitsWork)
        }
    }

    // MARK: Invariant violations (the loop's own bugs, never a user's race)

    @Test func releaseInTheMiddleOfATeardownIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = TestLoopLifecycle()
            _ = lifecycle.requestShutdown()
            _ = lifecycle.release()
        }
    }

    @Test func finishingATeardownOfAnOpenLoopIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = TestLoopLifecycle()
            _ = lifecycle.claim()
            lifecycle.finishTeardown()
        }
    }

    @Test func finishingATeardownThatWasOnlyRequestedIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = TestLoopLifecycle()
            _ = lifecycle.claim()
            _ = lifecycle.requestShutdown()
            lifecycle.finishTeardown()
        }
    }

    @Test func finishingATeardownTwiceIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = TestLoopLifecycle()
            _ = lifecycle.requestShutdown()
            lifecycle.finishTeardown()
            lifecycle.finishTeardown()
        }
    }
}

/// `.none` spelled so that it cannot be read as `Optional.none`.
private enum ShutdownActionNone {
    static let value = TestLoopLifecycle.ShutdownAction.none
}
