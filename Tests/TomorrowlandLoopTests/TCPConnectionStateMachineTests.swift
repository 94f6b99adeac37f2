import Testing

@testable import TomorrowlandLoop

/// The connection's state machine without sockets: every reachable state × every event (with
/// every combination of the buffer facts it takes) against a specification written out rule by
/// rule from the documented behaviour, plus the invariants every reachable state keeps.
@Suite("TCPConnection state machine")
struct TCPConnectionStateMachineTests {
    typealias Machine = TCPConnectionStateMachine

    /// An event with the facts the connection passes along.
    enum Event: Hashable {
        case startStreaming(buffered: Bool)
        case stopReading
        case resumeReading(buffered: Bool)
        case startRead
        case finishRead(buffered: Bool)
        case startDelivery(buffered: Bool)
        case finishDelivery(pendingOutput: Bool)
        case endOfInput(handler: Bool, pendingOutput: Bool, buffered: Bool)
        case closeIfBothDirectionsEnded(buffered: Bool)
        case noteUnwritable
        case shutdownOutput(pendingOutput: Bool, buffered: Bool)
        case sent(drained: Bool, belowHighWaterMark: Bool, buffered: Bool)
        case close(afterFlushing: Bool, pendingOutput: Bool)
        case fail

        static let all: [Event] = {
            let bools = [false, true]
            var events: [Event] = [.stopReading, .startRead, .noteUnwritable, .fail]
            for a in bools {
                events += [
                    .startStreaming(buffered: a), .resumeReading(buffered: a), .finishRead(buffered: a),
                    .startDelivery(buffered: a), .finishDelivery(pendingOutput: a),
                    .closeIfBothDirectionsEnded(buffered: a),
                ]
                for b in bools {
                    events += [
                        .shutdownOutput(pendingOutput: a, buffered: b), .close(afterFlushing: a, pendingOutput: b),
                    ]
                    for c in bools {
                        events += [
                            .endOfInput(handler: a, pendingOutput: b, buffered: c),
                            .sent(drained: a, belowHighWaterMark: b, buffered: c),
                        ]
                    }
                }
            }
            return events
        }()
    }

    /// Applies `event` to `machine`; returns the action, spelled as the machine's return value.
    static func apply(_ event: Event, to machine: inout Machine) -> String {
        switch event {
        case .startStreaming(let buffered): "\(machine.startStreaming(hasBufferedInput: buffered))"
        case .stopReading: "\(machine.stopReading())"
        case .resumeReading(let buffered): "\(machine.resumeReading(hasBufferedInput: buffered))"
        case .startRead: "\(machine.startRead())"
        case .finishRead(let buffered): "\(machine.finishRead(hasBufferedInput: buffered))"
        case .startDelivery(let buffered): "\(machine.startDelivery(hasBufferedInput: buffered))"
        case .finishDelivery(let pending): "\(machine.finishDelivery(hasPendingOutput: pending))"
        case .endOfInput(let handler, let pending, let buffered):
            "\(machine.endOfInput(hasInputClosedHandler: handler, hasPendingOutput: pending, hasBufferedInput: buffered))"
        case .closeIfBothDirectionsEnded(let buffered):
            "\(machine.closeIfBothDirectionsEnded(hasBufferedInput: buffered))"
        case .noteUnwritable: "\(machine.noteUnwritable())"
        case .shutdownOutput(let pending, let buffered):
            "\(machine.shutdownOutput(hasPendingOutput: pending, hasBufferedInput: buffered))"
        case .sent(let drained, let below, let buffered):
            "\(machine.sent(drained: drained, belowHighWaterMark: below, hasBufferedInput: buffered))"
        case .close(let afterFlushing, let pending):
            "\(machine.close(afterFlushing: afterFlushing, hasPendingOutput: pending))"
        case .fail: "\(machine.fail())"
        }
    }

    // MARK: The specification

    /// What `event` should do in `state`: the next state and the action, rule by rule.
    static func specification(_ state: Machine, _ event: Event) -> (Machine, String) {
        var next = Fields(state)
        let open = state.lifecycle == .open
        /// Both directions ended, nothing buffered, no read pending: the orderly close.
        func bothEnded(_ fields: Fields, buffered: Bool) -> Bool {
            fields.lifecycle == .open && fields.inputEnded && fields.output == .shutDown && !buffered
                && fields.reader != .reading
        }
        switch event {
        case .startStreaming(let buffered):
            // One input style per connection; a closing or closed one drops the handler.
            if state.reader != .idle { return (state, "misuse") }
            if !open { return (state, "ignored") }
            next.reader = .streaming
            return (next.machine, "started(deliverBuffered: \(buffered && !state.isReadingPaused))")
        case .stopReading:
            // A closed connection reads nothing any more: no pause to remember.
            if state.lifecycle != .closed { next.paused = true }
            return (next.machine, "()")
        case .resumeReading(let buffered):
            guard state.isReadingPaused else { return (state, "false") }
            next.paused = false
            return (next.machine, "\(buffered && open && state.reader == .streaming)")
        case .startRead:
            if state.reader == .streaming { return (state, "misuseStreaming") }
            if state.reader == .reading { return (state, "misuseOutstanding") }
            if !open { return (state, "rejectClosed") }
            next.reader = .reading
            return (next.machine, "pending")
        case .finishRead(let buffered):
            guard state.reader == .reading else { return (state, "false") }
            next.reader = .idle
            if bothEnded(next, buffered: buffered) { return (next.closed, "true") }
            return (next.machine, "false")
        case .startDelivery(let buffered):
            // The handler runs with input, while open, streaming, not paused, and not nested.
            guard buffered, open, state.reader == .streaming, !state.isReadingPaused, !state.isDeliveringInput
            else { return (state, "false") }
            next.delivering = true
            return (next.machine, "true")
        case .finishDelivery(let pendingOutput):
            guard state.isDeliveringInput else { return (state, "false") }
            next.delivering = false
            return (next.machine, "\(pendingOutput && state.lifecycle != .closed)")
        case .endOfInput(let handler, let pendingOutput, let buffered):
            guard open, !state.isInputEnded else { return (state, "none") }
            next.inputEnded = true
            switch state.reader {
            case .streaming:
                if handler { return (next.machine, "notifyHandler") }
                // No handler: the server default, close after flushing.
                if pendingOutput {
                    next.lifecycle = .closingAfterFlush
                    next.unwritable = false
                    return (next.machine, "closingAfterFlush")
                }
                return (next.closed, "closed")
            case .reading:
                return (next.machine, "completeRead")
            case .idle:
                return bothEnded(next, buffered: buffered) ? (next.closed, "closedBothEnded") : (next.machine, "none")
            }
        case .closeIfBothDirectionsEnded(let buffered):
            return bothEnded(next, buffered: buffered) ? (next.closed, "true") : (state, "false")
        case .noteUnwritable:
            if open { next.unwritable = true }
            return (next.machine, "()")
        case .shutdownOutput(let pendingOutput, let buffered):
            guard open, state.output == .open else { return (state, "none") }
            if pendingOutput {
                next.output = .shutdownRequested
                return (next.machine, "afterPendingOutput")
            }
            next.output = .shutDown
            if bothEnded(next, buffered: buffered) { return (next.closed, "now(thenClose: true)") }
            return (next.machine, "now(thenClose: false)")
        case .sent(let drained, let below, let buffered):
            var after = Machine.AfterSend()
            guard state.lifecycle != .closed else { return (state, "\(after)") }
            if drained && state.output == .shutdownRequested {
                next.output = .shutDown
                after.shutDownOutput = true
            }
            if state.wasUnwritable && below && open {
                next.unwritable = false
                after.notifyWritable = true
            }
            if (drained && state.lifecycle == .closingAfterFlush) || bothEnded(next, buffered: buffered) {
                after.closed = true
                return (next.closed, "\(after)")
            }
            return (next.machine, "\(after)")
        case .close(let afterFlushing, let pendingOutput):
            switch state.lifecycle {
            case .closed:
                return (state, "none")
            case .closingAfterFlush:
                return afterFlushing ? (state, "none") : (next.closed, "closeNow")
            case .open:
                guard afterFlushing && pendingOutput else { return (next.closed, "closeNow") }
                next.lifecycle = .closingAfterFlush
                next.unwritable = false
                let rejectRead = state.reader == .reading
                if rejectRead { next.reader = .idle }
                return (next.machine, "closeAfterFlush(rejectRead: \(rejectRead))")
            }
        case .fail:
            return state.lifecycle == .closed ? (state, "false") : (next.closed, "true")
        }
    }

    /// The machine's fields, mutable, for the specification.
    struct Fields {
        var lifecycle: Machine.Lifecycle
        var reader: Machine.Reader
        var paused: Bool
        var inputEnded: Bool
        var output: Machine.Output
        var delivering: Bool
        var unwritable: Bool

        init(_ machine: Machine) {
            lifecycle = machine.lifecycle
            reader = machine.reader
            paused = machine.isReadingPaused
            inputEnded = machine.isInputEnded
            output = machine.output
            delivering = machine.isDeliveringInput
            unwritable = machine.wasUnwritable
        }

        var machine: Machine {
            Machine(
                lifecycle: lifecycle, reader: reader, isReadingPaused: paused, isInputEnded: inputEnded, output: output,
                isDeliveringInput: delivering, wasUnwritable: unwritable)
        }

        /// Closed: nothing is wanted any more; what ended stays ended.
        var closed: Machine {
            Machine(
                lifecycle: .closed, reader: .idle, isReadingPaused: false, isInputEnded: inputEnded, output: output,
                isDeliveringInput: false, wasUnwritable: false)
        }
    }

    /// Every state of the product of the fields.
    static let allStates: [Machine] = {
        var states: [Machine] = []
        for lifecycle in Machine.Lifecycle.allCases {
            for reader in Machine.Reader.allCases {
                for output in Machine.Output.allCases {
                    for flags in 0..<16 {
                        states.append(
                            Machine(
                                lifecycle: lifecycle, reader: reader, isReadingPaused: flags & 1 != 0,
                                isInputEnded: flags & 2 != 0, output: output, isDeliveringInput: flags & 4 != 0,
                                wasUnwritable: flags & 8 != 0))
                    }
                }
            }
        }
        return states
    }()

    /// Whether the facts `event` carries can hold in `state`: once `shutdown(SHUT_WR)` was done,
    /// no output can be pending (none is taken after the request, and it waits for the drain).
    static func isPossible(_ event: Event, in state: Machine) -> Bool {
        guard state.output == .shutDown else { return true }
        switch event {
        case .finishDelivery(pendingOutput: true), .endOfInput(_, pendingOutput: true, _),
            .shutdownOutput(pendingOutput: true, _), .close(_, pendingOutput: true), .sent(drained: false, _, _):
            return false
        default:
            return true
        }
    }

    /// The states reachable from a new connection's by any sequence of possible events.
    static let reachableStates: Set<Machine> = {
        var seen: Set<Machine> = [Machine()]
        var frontier = [Machine()]
        while let state = frontier.popLast() {
            for event in Event.all where isPossible(event, in: state) {
                var next = state
                _ = apply(event, to: &next)
                if seen.insert(next).inserted { frontier.append(next) }
            }
        }
        return seen
    }()

    /// What holds in every state a connection can be in.
    static func violations(of state: Machine) -> [String] {
        var found: [String] = []
        if state.isDeliveringInput && state.reader != .streaming { found.append("delivering without a handler") }
        if state.lifecycle == .closed {
            if state.reader != .idle || state.isReadingPaused || state.isDeliveringInput || state.wasUnwritable {
                found.append("a closed connection keeps reading or writing state")
            }
        }
        if state.lifecycle != .open && state.reader == .reading { found.append("a read pending while not open") }
        if state.lifecycle != .open && state.wasUnwritable { found.append("onWritable owed while not open") }
        if state.lifecycle == .closingAfterFlush && state.output == .shutDown {
            found.append("closing after a flush with the output already shut down (nothing to flush)")
        }
        if state.wantsReadEvent && (state.lifecycle != .open || state.isInputEnded) {
            found.append("the read event wanted although no input can come")
        }
        if state.acceptsOutput && (state.lifecycle != .open || state.output != .open) {
            found.append("output taken although closing or shut down")
        }
        return found
    }

    // MARK: Tests

    @Test func everyReachableStateAndEventMatchesTheSpecification() {
        var checked = 0
        for state in Self.reachableStates {
            for event in Self.Event.all {
                var machine = state
                let action = Self.apply(event, to: &machine)
                let (expectedState, expectedAction) = Self.specification(state, event)
                #expect(action == expectedAction, "\(state) + \(event)")
                #expect(machine == expectedState, "\(state) + \(event)")
                checked += 1
            }
        }
        #expect(checked == Self.reachableStates.count * Self.Event.all.count)
    }

    @Test func everyStateOfTheProductAndEventMatchesTheSpecification() {
        // Unreachable states too: a transition never depends on more than it should.
        for state in Self.allStates {
            for event in Self.Event.all {
                var machine = state
                let action = Self.apply(event, to: &machine)
                let (expectedState, expectedAction) = Self.specification(state, event)
                #expect(action == expectedAction && machine == expectedState, "\(state) + \(event)")
            }
        }
    }

    @Test func reachableStatesKeepTheInvariants() {
        for state in Self.reachableStates {
            #expect(Self.violations(of: state).isEmpty, "\(state): \(Self.violations(of: state))")
        }
        // Every lifecycle, reader and output state is reachable, and the product is not: the
        // invariants rule states out.
        #expect(Set(Self.reachableStates.map(\.lifecycle)) == Set(Machine.Lifecycle.allCases))
        #expect(Set(Self.reachableStates.map(\.reader)) == Set(Machine.Reader.allCases))
        #expect(Set(Self.reachableStates.map(\.output)) == Set(Machine.Output.allCases))
        // 126 of the 432 combinations of the fields: a change to this number is a change to the
        // connection's lifecycle, to be looked at.
        #expect(Self.reachableStates.count == 126)
        #expect(Self.allStates.count == 432)
        #expect(Self.allStates.filter { Self.violations(of: $0).isEmpty }.count >= Self.reachableStates.count)
    }

    @Test func closedIsFinal() {
        for state in Self.reachableStates where state.lifecycle == .closed {
            for event in Self.Event.all {
                var machine = state
                _ = Self.apply(event, to: &machine)
                #expect(machine.lifecycle == .closed, "\(state) + \(event)")
                #expect(!machine.wantsReadEvent && !machine.acceptsOutput && !machine.sendsAppendedOutput)
            }
        }
    }

    @Test func closingInsideTheHandlerEndsTheDeliveryWithoutSending() {
        var machine = Machine()
        _ = machine.startStreaming(hasBufferedInput: false)
        let delivering = machine.startDelivery(hasBufferedInput: true)
        #expect(delivering)
        #expect(!machine.sendsAppendedOutput, "output written in the handler waits for it to return")
        let close = machine.close(afterFlushing: false, hasPendingOutput: true)
        #expect(close == .closeNow)
        let send = machine.finishDelivery(hasPendingOutput: true)
        #expect(!send)
    }

    @Test func closingAfterFlushInsideTheHandlerSendsWhenItReturnsThenCloses() {
        var machine = Machine()
        _ = machine.startStreaming(hasBufferedInput: false)
        let delivering = machine.startDelivery(hasBufferedInput: true)
        #expect(delivering)
        let close = machine.close(afterFlushing: true, hasPendingOutput: true)
        #expect(close == .closeAfterFlush(rejectRead: false))
        #expect(!machine.acceptsOutput)
        let send = machine.finishDelivery(hasPendingOutput: true)
        #expect(send)
        let partial = machine.sent(drained: false, belowHighWaterMark: true, hasBufferedInput: false)
        #expect(partial == .init())
        #expect(machine.lifecycle == .closingAfterFlush)
        let drained = machine.sent(drained: true, belowHighWaterMark: true, hasBufferedInput: false)
        #expect(drained.closed)
        #expect(machine.lifecycle == .closed)
    }

    @Test func onWritableIsOwedOnceAfterTheOutputWasSeenFull() {
        var machine = Machine()
        var notified: [Bool] = []
        notified.append(machine.sent(drained: true, belowHighWaterMark: true, hasBufferedInput: false).notifyWritable)
        machine.noteUnwritable()
        notified.append(machine.sent(drained: false, belowHighWaterMark: false, hasBufferedInput: false).notifyWritable)
        notified.append(machine.sent(drained: false, belowHighWaterMark: true, hasBufferedInput: false).notifyWritable)
        notified.append(machine.sent(drained: true, belowHighWaterMark: true, hasBufferedInput: false).notifyWritable)
        #expect(notified == [false, false, true, false])
    }

    @Test func bothDirectionsEndingClosesOnceTheLastReadIsDone() {
        var machine = Machine()
        var actions: [String] = []
        actions.append("\(machine.startRead())")
        actions.append("\(machine.shutdownOutput(hasPendingOutput: false, hasBufferedInput: false))")
        actions.append(
            "\(machine.endOfInput(hasInputClosedHandler: false, hasPendingOutput: false, hasBufferedInput: true))")
        // The read took part of the input: more is buffered, the connection stays open for it.
        actions.append("\(machine.finishRead(hasBufferedInput: true))")
        actions.append("\(machine.startRead())")
        actions.append("\(machine.finishRead(hasBufferedInput: false))")
        #expect(actions == ["pending", "now(thenClose: false)", "completeRead", "false", "pending", "true"])
        #expect(machine.lifecycle == .closed)
    }
}
