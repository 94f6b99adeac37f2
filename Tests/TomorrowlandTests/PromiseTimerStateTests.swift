import Synchronization
import Testing

@testable import Tomorrowland

/// Every state of a promise timer's one-shot life against every transition, without an executor.
///
/// The expected transitions are written out here from `PromiseTimerState`'s documentation,
/// independently of the implementation: idle (with or without a reserved place), arming, armed
/// (through a handle, or stored in the executor's own timers), done. Each state is built by the
/// transitions themselves, and each test checks one transition from every state: what it returns,
/// and the state it leaves (its phase and which handle, reservation and stored timer it keeps).
@Suite("Promise timer state machine")
struct PromiseTimerStateTests {
    typealias State = PromiseTimerState
    typealias Phase = PromiseTimerState.Phase

    typealias FakeHandle = FakeScheduledWork

    /// A place an executor reserved; only its identity matters.
    final class FakeReservation: PromiseTimerReservation {
        func arm(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
            FakeHandle()
        }

        func cancel() {}
    }

    /// What a state holds, comparable: its phase and the identities of what it keeps.
    struct Snapshot: Equatable, CustomStringConvertible {
        var phase: Phase
        var handle: ObjectIdentifier?
        var reservation: ObjectIdentifier?
        var storedTimer: PromiseTimerID?

        init(
            _ phase: Phase, handle: AnyObject? = nil, reservation: AnyObject? = nil,
            storedTimer: PromiseTimerID? = nil
        ) {
            self.phase = phase
            self.handle = handle.map(ObjectIdentifier.init)
            self.reservation = reservation.map(ObjectIdentifier.init)
            self.storedTimer = storedTimer
        }

        init(_ state: State) {
            self.init(
                state.phase, handle: state.handle.map { $0 as AnyObject }, reservation: state.reservation,
                storedTimer: state.storedTimer)
        }

        var description: String {
            "\(phase) handle: \(handle != nil) reservation: \(reservation != nil) stored: \(storedTimer != nil)"
        }
    }

    let reservation = FakeReservation()
    let handle = FakeHandle()
    let storedID = PromiseTimerID(slot: 3, sequence: 7)

    /// One reachable state: how it was reached, the state, and what it should hold.
    struct Case: CustomStringConvertible {
        var name: String
        var state: State
        var expected: Snapshot
        var description: String { name }
    }

    /// Every state the timer's life allows, each reached by the transitions the owners use.
    var reachableStates: [Case] {
        var cases: [Case] = []
        func add(_ name: String, _ state: State, _ expected: Snapshot) {
            cases.append(Case(name: name, state: state, expected: expected))
        }
        let idleReserved = State(reservation: reservation)
        let idleUnreserved = State(reservation: nil)
        add("idle, with a reserved place", idleReserved, Snapshot(.idle, reservation: reservation))
        add("idle, without a reserved place", idleUnreserved, Snapshot(.idle))
        for (name, idle) in [("reserved", idleReserved), ("unreserved", idleUnreserved)] {
            var arming = idle
            _ = arming.beginArming()
            add("arming (\(name))", arming, Snapshot(.arming))
            var armedWithHandle = arming
            _ = armedWithHandle.finishArming(with: handle)
            add("armed with a handle (\(name))", armedWithHandle, Snapshot(.armed, handle: handle))
            if name == "unreserved" {
                // Only a timer without a reserved place is stored in the executor's own timers.
                var armedStored = arming
                _ = armedStored.finishArming(storedAs: storedID)
                add("armed, stored (\(name))", armedStored, Snapshot(.armed, storedTimer: storedID))
            }
        }
        var cancelledIdle = idleReserved
        _ = cancelledIdle.cancel()
        add("done: cancelled while idle", cancelledIdle, Snapshot(.done))
        var ended = idleUnreserved
        _ = ended.beginArming()
        _ = ended.finishArming(with: handle)
        _ = ended.end()
        add("done: fired", ended, Snapshot(.done))
        return cases
    }

    @Test("each reachable state holds what its path put in it")
    func reachableStatesHoldWhatTheirPathPutInThem() {
        for reached in reachableStates {
            #expect(Snapshot(reached.state) == reached.expected, "\(reached)")
        }
    }

    @Test("beginArming: idle moves to arming and hands over the reservation; elsewhere nothing changes")
    func beginArmingFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let begun = state.beginArming()
            if reached.expected.phase == .idle {
                #expect(begun.isArming, "\(reached)")
                #expect(begun.reservation.map { ObjectIdentifier($0) } == reached.expected.reservation)
                #expect(Snapshot(state) == Snapshot(.arming), "the reservation left with the caller")
            } else {
                #expect(!begun.isArming, "armed once already, or cancelled: \(reached)")
                #expect(begun.reservation == nil)
                #expect(Snapshot(state) == reached.expected)
            }
        }
    }

    @Test("finishArming(with:): arming keeps the handle and is armed; elsewhere it refuses the handle")
    func finishArmingWithAHandleFromEveryState() {
        let newHandle = FakeHandle()
        for reached in reachableStates {
            var state = reached.state
            let kept = state.finishArming(with: newHandle)
            if reached.expected.phase == .arming {
                #expect(kept, "\(reached)")
                #expect(Snapshot(state) == Snapshot(.armed, handle: newHandle))
            } else {
                #expect(!kept, "the caller must cancel the handle: \(reached)")
                #expect(Snapshot(state) == reached.expected, "\(reached)")
            }
        }
    }

    @Test("finishArming(storedAs:): arming records the stored timer; elsewhere it refuses it")
    func finishArmingStoredFromEveryState() {
        let newID = PromiseTimerID(slot: 9, sequence: 1)
        for reached in reachableStates {
            var state = reached.state
            let kept = state.finishArming(storedAs: newID)
            if reached.expected.phase == .arming {
                #expect(kept, "\(reached)")
                #expect(Snapshot(state) == Snapshot(.armed, storedTimer: newID))
            } else {
                #expect(!kept, "the caller must cancel the stored timer: \(reached)")
                #expect(Snapshot(state) == reached.expected, "\(reached)")
            }
        }
    }

    @Test("cancel: ends every live state and hands back what it held; a done timer returns nothing")
    func cancelFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let cancellation = state.cancel()
            // Whatever the state held is what the caller must cancel; arming holds nothing (the
            // arming call cancels its handle when finishArming refuses it).
            let returned = Snapshot(
                .done, handle: cancellation.handle.map { $0 as AnyObject }, reservation: cancellation.reservation,
                storedTimer: cancellation.storedTimer)
            var held = reached.expected
            held.phase = .done
            #expect(returned == held, "\(reached)")
            #expect(Snapshot(state) == Snapshot(.done), "\(reached)")
        }
    }

    @Test("cancelStored: only an armed, stored timer ends and returns its identifier")
    func cancelStoredFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let id = state.cancelStored()
            if reached.expected.phase == .armed, let stored = reached.expected.storedTimer {
                #expect(id == stored, "\(reached)")
                #expect(Snapshot(state) == Snapshot(.done))
            } else {
                #expect(id == nil, "\(reached)")
                #expect(Snapshot(state) == reached.expected, "nothing changed: \(reached)")
            }
        }
    }

    @Test("end: an arming or armed timer ends, handing back its spent handle; idle and done are unchanged")
    func endFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let ended = state.end()
            switch reached.expected.phase {
            case .arming, .armed:
                #expect(ended.wasArmed, "\(reached)")
                #expect(ended.handle.map { ObjectIdentifier($0 as AnyObject) } == reached.expected.handle)
                #expect(Snapshot(state) == Snapshot(.done), "\(reached)")
            case .idle, .done:
                #expect(!ended.wasArmed, "\(reached)")
                #expect(ended.handle == nil)
                #expect(Snapshot(state) == reached.expected, "\(reached)")
            }
        }
    }

    @Test("a cancel that races an arm: the arm's handle or stored timer is refused, and cancelled by its caller")
    func aCancelWhileArmingMakesTheArmerCancel() {
        for reservation in [reservation, nil] as [FakeReservation?] {
            var state = State(reservation: reservation)
            let begun = state.beginArming()
            #expect(begun.isArming)
            let cancellation = state.cancel()
            #expect(cancellation.handle == nil && cancellation.reservation == nil && cancellation.storedTimer == nil)
            var stored = state
            #expect(state.finishArming(with: handle) == false)
            #expect(stored.finishArming(storedAs: storedID) == false)
            #expect(Snapshot(state) == Snapshot(.done))
            #expect(Snapshot(stored) == Snapshot(.done))
        }
    }

    @Test("a timer fires once: after end, a cancel has nothing to cancel and a second end reports nothing")
    func aFiredTimerEndsOnce() {
        var state = State(reservation: nil)
        _ = state.beginArming()
        #expect(state.finishArming(storedAs: storedID) == true)
        let first = state.end()
        #expect(first.wasArmed && first.handle == nil)
        let second = state.end()
        #expect(!second.wasArmed)
        let cancellation = state.cancel()
        #expect(cancellation.handle == nil && cancellation.reservation == nil && cancellation.storedTimer == nil)
        #expect(state.cancelStored() == nil)
    }
}
