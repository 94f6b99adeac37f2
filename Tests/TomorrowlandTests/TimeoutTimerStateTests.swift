import Testing
import TomorrowlandTesting

@testable import Tomorrowland

/// A timeout's timer state (`TimeoutTimerState`) against every transition, without an executor,
/// and the size that keeps a timeout's box in glibc's fast bins.
///
/// The expected transitions are written out here from the type's documentation: idle, arming,
/// armed (stored in the executor's own timers, inline; or through a handle, in a holder), done.
@Suite("Timeout timer state machine")
struct TimeoutTimerStateTests {
    typealias State = TimeoutTimerState
    typealias Phase = PromiseTimerState.Phase

    typealias FakeHandle = FakeScheduledWork

    /// What a link holds, comparable: the stored timer, or the identity of the holder's handle.
    struct LinkSnapshot: Equatable {
        var storedTimer: PromiseTimerID?
        var holds = false
        var handle: ObjectIdentifier?

        /// The snapshot of a link with these contents.
        init(storedTimer: PromiseTimerID? = nil, holds: Bool = false, handle: AnyObject? = nil) {
            self.storedTimer = storedTimer
            self.holds = holds
            self.handle = handle.map(ObjectIdentifier.init)
        }

        /// What `link` holds.
        init(_ link: State.Link) {
            switch link {
            case .none: self.init()
            case .stored(let sequence, let slot): self.init(storedTimer: PromiseTimerID(slot: slot, sequence: sequence))
            case .held(let holder): self.init(holds: true, handle: holder.handle.map { $0 as AnyObject })
            }
        }
    }

    /// One reachable state: how it was reached, the state, and what it should hold.
    struct Case: CustomStringConvertible {
        var name: String
        var state: State
        var phase: Phase
        var link: LinkSnapshot
        var description: String { name }
    }

    let handle = FakeHandle()
    let storedID = PromiseTimerID(slot: 3, sequence: 7)

    /// Every state the timer's life allows, each reached by the transitions the box uses.
    var reachableStates: [Case] {
        var cases: [Case] = []
        func add(_ name: String, _ state: State, _ phase: Phase, _ link: LinkSnapshot) {
            cases.append(Case(name: name, state: state, phase: phase, link: link))
        }
        add("idle", State(), .idle, LinkSnapshot())
        var arming = State()
        _ = arming.beginArming()
        add("arming", arming, .arming, LinkSnapshot())
        var armedHandle = arming
        _ = armedHandle.finishArming(with: handle, in: TimeoutTimerHolder())
        add("armed with a handle", armedHandle, .armed, LinkSnapshot(holds: true, handle: handle))
        var armedStored = arming
        _ = armedStored.finishArming(storedAs: storedID)
        add("armed, stored", armedStored, .armed, LinkSnapshot(storedTimer: storedID))
        var cancelledIdle = State()
        _ = cancelledIdle.cancel()
        add("done: cancelled while idle", cancelledIdle, .done, LinkSnapshot())
        var fired = armedStored
        _ = fired.end()
        add("done: fired", fired, .done, LinkSnapshot())
        return cases
    }

    @Test("each reachable state holds what its path put in it")
    func reachableStatesHoldWhatTheirPathPutInThem() {
        for reached in reachableStates {
            #expect(reached.state.phase == reached.phase, "\(reached)")
            #expect(LinkSnapshot(reached.state.link) == reached.link, "\(reached)")
        }
    }

    @Test("beginArming: idle moves to arming; elsewhere nothing changes")
    func beginArmingFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let isArming = state.beginArming()
            if reached.phase == .idle {
                #expect(isArming, "\(reached)")
                #expect(state.phase == .arming && LinkSnapshot(state.link) == LinkSnapshot())
            } else {
                #expect(!isArming, "armed once already, or cancelled: \(reached)")
                #expect(state.phase == reached.phase && LinkSnapshot(state.link) == reached.link)
            }
        }
    }

    @Test("finishArming: arming keeps the stored timer or the handle and is armed; elsewhere it refuses them")
    func finishArmingFromEveryState() {
        let newHandle = FakeHandle()
        let newID = PromiseTimerID(slot: 9, sequence: 1)
        for reached in reachableStates {
            var stored = reached.state
            var held = reached.state
            let holder = TimeoutTimerHolder()
            let keptStored = stored.finishArming(storedAs: newID)
            let keptHandle = held.finishArming(with: newHandle, in: holder)
            if reached.phase == .arming {
                #expect(keptStored && keptHandle, "\(reached)")
                #expect(stored.phase == .armed && LinkSnapshot(stored.link) == LinkSnapshot(storedTimer: newID))
                #expect(held.phase == .armed && LinkSnapshot(held.link) == LinkSnapshot(holds: true, handle: newHandle))
            } else {
                #expect(!keptStored && !keptHandle, "the caller must cancel what it armed: \(reached)")
                #expect(stored.phase == reached.phase && LinkSnapshot(stored.link) == reached.link)
                #expect(held.phase == reached.phase && LinkSnapshot(held.link) == reached.link)
                #expect(holder.handle == nil, "\(reached)")
            }
        }
    }

    @Test("cancel: ends every live state and hands back what it held; a done timer returns nothing")
    func cancelFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let taken = state.cancel()
            #expect(LinkSnapshot(taken) == reached.link, "\(reached)")
            #expect(state.phase == .done && LinkSnapshot(state.link) == LinkSnapshot(), "\(reached)")
        }
    }

    @Test("cancelStored: only an armed, stored timer ends and returns its identifier")
    func cancelStoredFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let id = state.cancelStored()
            if reached.phase == .armed, let stored = reached.link.storedTimer {
                #expect(id == stored, "\(reached)")
                #expect(state.phase == .done && LinkSnapshot(state.link) == LinkSnapshot())
            } else {
                #expect(id == nil, "\(reached)")
                #expect(state.phase == reached.phase && LinkSnapshot(state.link) == reached.link, "\(reached)")
            }
        }
    }

    @Test("end: an arming or armed timer ends, handing back its spent link; idle and done are unchanged")
    func endFromEveryState() {
        for reached in reachableStates {
            var state = reached.state
            let ended = state.end()
            switch reached.phase {
            case .arming, .armed:
                #expect(ended.wasArmed, "\(reached)")
                #expect(LinkSnapshot(ended.spent) == reached.link, "\(reached)")
                #expect(state.phase == .done && LinkSnapshot(state.link) == LinkSnapshot(), "\(reached)")
            case .idle, .done:
                #expect(!ended.wasArmed, "\(reached)")
                #expect(LinkSnapshot(ended.spent) == LinkSnapshot())
                #expect(state.phase == reached.phase && LinkSnapshot(state.link) == reached.link, "\(reached)")
            }
        }
    }

    @Test("a cancel that races an arm: the arm's handle or stored timer is refused, and cancelled by its caller")
    func aCancelWhileArmingMakesTheArmerCancel() {
        var state = State()
        let began = state.beginArming()
        #expect(began)
        let taken = state.cancel()
        #expect(LinkSnapshot(taken) == LinkSnapshot())
        var stored = state
        let keptHandle = state.finishArming(with: handle, in: TimeoutTimerHolder())
        let keptStored = stored.finishArming(storedAs: storedID)
        #expect(!keptHandle && !keptStored)
        #expect(state.phase == .done && stored.phase == .done)
    }

    @Test("a cancel's link cancels the stored timer by its identifier, or the holder's handle")
    func aCancelledLinkCancelsWhatItHolds() {
        /// A handle that counts its cancels (touched by this test's thread only).
        final class Counting: PromiseScheduledWork, @unchecked Sendable {
            var cancels = 0
            func cancel() { cancels += 1 }
        }
        var cancelledIDs: [PromiseTimerID] = []
        State.Link.stored(sequence: 7, slot: 3).perform { cancelledIDs.append($0) }
        #expect(cancelledIDs == [storedID])
        let handle = Counting()
        let holder = TimeoutTimerHolder()
        holder.handle = handle
        State.Link.held(holder).perform { _ in Issue.record("no stored timer") }
        #expect(handle.cancels == 1)
        State.Link.none.perform { _ in Issue.record("nothing to cancel") }
    }

    @Test("the state takes 14 bytes: the stored timer's numbers, a tag and the phase")
    func theStateTakesFourteenBytes() {
        #expect(MemoryLayout<State>.size == 14)
    }

    #if !canImport(ObjectiveC)
        @Test("a timeout's box takes at most 120 bytes (glibc's fast bins)")
        func aTimeoutBoxFitsTheFastBins() throws {
            try #require(ClassInstanceSize.readsTheRuntimesLayout)
            let loop = TestLoop()
            let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
            let timeout = promise.timeout(on: .executor(loop), delay: .seconds(30))
            typealias Box = TimeoutBox<Int, Never, PromiseTimeoutError<Never>, TimeoutRejecting<Int, Never>>
            // The box `timeout` makes is of this type, whatever other tests switch on meanwhile.
            #expect(type(of: timeout.box) == Box.self)
            #expect(ClassInstanceSize.of(Box.self) <= 120)
            // Resolved, so that the loop lets go of the timer (it holds the box, whose context
            // holds the loop).
            resolver.fulfill(with: 1)
            loop.run()
            #expect(timeout.result == .value(1))
        }
    #endif
}
