/// The lifecycle of a ``TCPConnection`` as a value: every decision about what a connection does
/// next (take output, send now, close, shut down the sending side, call `onWritable`...) is a pure
/// transition here that returns the action; the connection (the storage: socket, buffers,
/// events, resolvers) performs it.
///
/// A transition never runs user code, and the connection runs user code (read handlers,
/// `onWritable`, `onInputClosed`, promise callbacks) only after the transition that caused it has
/// completed and its actions were performed, so that a callback finds a consistent state and may
/// call any public method of the connection.
///
/// Facts about the buffers (whether output is pending, whether input is buffered) are passed to
/// the transitions that need them: the machine holds no bytes. Which libevent events are added
/// follows from the state: ``wantsReadEvent``.
struct TCPConnectionStateMachine: Hashable, Sendable {
    /// Whether the connection is open, closing after a flush, or closed.
    enum Lifecycle: Hashable, Sendable, CaseIterable {
        case open
        /// ``TCPConnection/close(afterFlushing:)`` with output pending: no more input or new
        /// output; closes once the output is sent.
        case closingAfterFlush
        case closed
    }

    /// How input is consumed.
    enum Reader: Hashable, Sendable, CaseIterable {
        /// Neither a streaming handler nor a pending promise read.
        case idle
        /// ``TCPConnection/startReading(_:)`` installed a handler (for the connection's life).
        case streaming
        /// A promise read is pending.
        case reading
    }

    /// The sending side.
    enum Output: Hashable, Sendable, CaseIterable {
        case open
        /// ``TCPConnection/shutdownOutput()`` was called: no new output; `shutdown(SHUT_WR)`
        /// once what is pending was sent.
        case shutdownRequested
        /// `shutdown(SHUT_WR)` was done.
        case shutDown
    }

    private(set) var lifecycle = Lifecycle.open
    private(set) var reader = Reader.idle
    /// ``TCPConnection/stopReading()`` without a later ``TCPConnection/resumeReading()``; only
    /// the streaming handler pauses (kept when set before ``TCPConnection/startReading(_:)``).
    private(set) var isReadingPaused = false
    /// The peer sent end of input.
    private(set) var isInputEnded = false
    private(set) var output = Output.open
    /// Inside the streaming handler: output waits until it returns, then goes in one `send`.
    private(set) var isDeliveringInput = false
    /// ``TCPConnection/isWritable`` was false since `onWritable` was last called.
    private(set) var wasUnwritable = false

    // The initializers are the synthesized ones: `init()`, the open state, and the memberwise
    // one with every field, with which the tests enumerate states.

    // MARK: Derived

    /// Whether new output (writes, enqueues) is taken.
    var acceptsOutput: Bool { lifecycle == .open && output == .open }

    /// Whether the socket's read event should be added: input is wanted and can still come.
    var wantsReadEvent: Bool {
        lifecycle == .open && !isInputEnded
            && ((reader == .streaming && !isReadingPaused) || reader == .reading)
    }

    /// Whether output appended now is sent at once (the storage also waits while the write event
    /// is added: then the socket is full and the event sends it).
    var sendsAppendedOutput: Bool { lifecycle != .closed && !isDeliveringInput }

    /// Whether the streaming handler may be given the buffered input now.
    var deliversToHandler: Bool { lifecycle == .open && reader == .streaming && !isReadingPaused }

    // MARK: Reading

    /// What ``startStreaming()`` decided.
    enum StartStreaming: Hashable, Sendable {
        /// A second handler, or a handler while a promise read is pending: a precondition failure.
        case misuse
        /// The connection is closing or closed: the handler is dropped.
        case ignored
        /// The handler is installed; `deliverBuffered`: hand buffered input to it on a later turn.
        case started(deliverBuffered: Bool)
    }

    /// ``TCPConnection/startReading(_:)``.
    mutating func startStreaming(hasBufferedInput: Bool) -> StartStreaming {
        guard reader == .idle else { return .misuse }
        guard lifecycle == .open else { return .ignored }
        reader = .streaming
        return .started(deliverBuffered: hasBufferedInput && !isReadingPaused)
    }

    /// ``TCPConnection/stopReading()``: a closed connection has nothing to pause.
    mutating func stopReading() {
        if lifecycle != .closed { isReadingPaused = true }
    }

    /// Returns whether to hand buffered input to the handler on a later turn.
    mutating func resumeReading(hasBufferedInput: Bool) -> Bool {
        guard isReadingPaused else { return false }
        isReadingPaused = false
        return hasBufferedInput && deliversToHandler
    }

    /// What ``startRead()`` decided.
    enum StartRead: Hashable, Sendable {
        /// A promise read after ``TCPConnection/startReading(_:)``: a precondition failure.
        case misuseStreaming
        /// A second outstanding read: a precondition failure.
        case misuseOutstanding
        /// Closing or closed: the read rejects with ``TCPError/closed``.
        case rejectClosed
        /// The read is pending; try to complete it from the buffer now.
        case pending
    }

    /// A promise read (``TCPConnection/read(maxBytes:)`` and its siblings).
    mutating func startRead() -> StartRead {
        switch reader {
        case .streaming: return .misuseStreaming
        case .reading: return .misuseOutstanding
        case .idle: break
        }
        guard lifecycle == .open else { return .rejectClosed }
        reader = .reading
        return .pending
    }

    /// The pending read completed (resolved or rejected by its own rule) or was cancelled.
    /// Returns whether the connection now closes (both directions ended, nothing left to read).
    mutating func finishRead(hasBufferedInput: Bool) -> Bool {
        guard reader == .reading else { return false }
        reader = .idle
        return closeIfBothDirectionsEnded(hasBufferedInput: hasBufferedInput)
    }

    /// Returns whether the handler is called now: sets ``isDeliveringInput`` until
    /// ``finishDelivery()``.
    mutating func startDelivery(hasBufferedInput: Bool) -> Bool {
        guard hasBufferedInput, deliversToHandler, !isDeliveringInput else { return false }
        isDeliveringInput = true
        return true
    }

    /// The handler returned. Returns whether to send the output it queued (unless the connection
    /// closed meanwhile).
    mutating func finishDelivery(hasPendingOutput: Bool) -> Bool {
        guard isDeliveringInput else { return false }
        isDeliveringInput = false
        return hasPendingOutput && lifecycle != .closed
    }

    /// What ``endOfInput(hasInputClosedHandler:hasPendingOutput:hasBufferedInput:)`` decided.
    enum EndOfInput: Hashable, Sendable {
        /// Nothing to do (closed, or the end was seen before).
        case none
        /// Streaming with an `onInputClosed` handler: call it.
        case notifyHandler
        /// Streaming without a handler: close after flushing (already decided here).
        case closingAfterFlush
        /// Streaming without a handler and nothing pending: closed now.
        case closed
        /// Promise reads: complete the pending read (end-of-input rules).
        case completeRead
        /// Both directions ended and nothing is left to read: closed now.
        case closedBothEnded
    }

    /// The peer sent end of input (`recv` returned 0).
    mutating func endOfInput(
        hasInputClosedHandler: Bool, hasPendingOutput: Bool, hasBufferedInput: Bool
    )
        -> EndOfInput
    {
        guard lifecycle == .open, !isInputEnded else { return .none }
        isInputEnded = true
        switch reader {
        case .streaming:
            if hasInputClosedHandler { return .notifyHandler }
            switch close(afterFlushing: true, hasPendingOutput: hasPendingOutput) {
            case .closeNow: return .closed
            default: return .closingAfterFlush
            }
        case .reading:
            return .completeRead
        case .idle:
            return closeIfBothDirectionsEnded(hasBufferedInput: hasBufferedInput) ? .closedBothEnded : .none
        }
    }

    /// Closes (returns true) when both directions ended, nothing is left to read and no read is
    /// pending.
    mutating func closeIfBothDirectionsEnded(hasBufferedInput: Bool) -> Bool {
        guard lifecycle == .open, isInputEnded, output == .shutDown, !hasBufferedInput, reader != .reading
        else { return false }
        becomeClosed()
        return true
    }

    // MARK: Writing

    /// Records that ``TCPConnection/isWritable`` is (or was seen) false: `onWritable` follows
    /// when it turns true.
    mutating func noteUnwritable() {
        if lifecycle == .open { wasUnwritable = true }
    }

    /// What ``shutdownOutput(hasPendingOutput:hasBufferedInput:)`` decided.
    enum ShutdownOutput: Hashable, Sendable {
        case none
        /// Wait for the pending output; the send that empties it shuts down.
        case afterPendingOutput
        /// `shutdown(SHUT_WR)` now; `thenClose`: both directions ended, the connection closed.
        case now(thenClose: Bool)
    }

    /// ``TCPConnection/shutdownOutput()``.
    mutating func shutdownOutput(hasPendingOutput: Bool, hasBufferedInput: Bool) -> ShutdownOutput {
        guard lifecycle == .open, output == .open else { return .none }
        if hasPendingOutput {
            output = .shutdownRequested
            return .afterPendingOutput
        }
        output = .shutDown
        return .now(thenClose: closeIfBothDirectionsEnded(hasBufferedInput: hasBufferedInput))
    }

    /// What a send round decided (``sent(drained:belowHighWaterMark:hasBufferedInput:)``).
    struct AfterSend: Hashable, Sendable {
        /// `shutdown(SHUT_WR)` now.
        var shutDownOutput = false
        /// Call `onWritable` (after the state is settled).
        var notifyWritable = false
        /// The connection closed (closing after flush, or both directions ended).
        var closed = false
    }

    /// A send round ended without error; `drained`: no output is pending.
    mutating func sent(drained: Bool, belowHighWaterMark: Bool, hasBufferedInput: Bool) -> AfterSend {
        var after = AfterSend()
        guard lifecycle != .closed else { return after }
        if drained && output == .shutdownRequested {
            output = .shutDown
            after.shutDownOutput = true
        }
        if wasUnwritable && belowHighWaterMark && lifecycle == .open {
            wasUnwritable = false
            after.notifyWritable = true
        }
        if drained && lifecycle == .closingAfterFlush {
            becomeClosed()
            after.closed = true
        } else {
            after.closed = closeIfBothDirectionsEnded(hasBufferedInput: hasBufferedInput)
        }
        return after
    }

    // MARK: Closing

    /// What ``close(afterFlushing:hasPendingOutput:)`` decided.
    enum Close: Hashable, Sendable {
        /// Already closed, or already closing after a flush and asked to do that again.
        case none
        /// Close now: the socket closes, pending output is dropped.
        case closeNow
        /// Closing after the flush; `rejectRead`: a pending promise read rejects now.
        case closeAfterFlush(rejectRead: Bool)
    }

    /// ``TCPConnection/close(afterFlushing:)``.
    mutating func close(afterFlushing: Bool, hasPendingOutput: Bool) -> Close {
        switch lifecycle {
        case .closed:
            return .none
        case .closingAfterFlush:
            if afterFlushing { return .none }
            becomeClosed()
            return .closeNow
        case .open:
            guard afterFlushing && hasPendingOutput else {
                becomeClosed()
                return .closeNow
            }
            lifecycle = .closingAfterFlush
            wasUnwritable = false
            let rejectRead = reader == .reading
            if rejectRead { reader = .idle }
            return .closeAfterFlush(rejectRead: rejectRead)
        }
    }

    /// Closes for an error (a failed send or receive, input past its bound) or the loop's
    /// shutdown. Returns false when already closed.
    mutating func fail() -> Bool {
        guard lifecycle != .closed else { return false }
        becomeClosed()
        return true
    }

    /// The final state: nothing is wanted any more, so nothing is kept.
    private mutating func becomeClosed() {
        self = TCPConnectionStateMachine(
            lifecycle: .closed, reader: .idle, isReadingPaused: false, isInputEnded: isInputEnded,
            output: output, isDeliveringInput: false, wasUnwritable: false)
    }
}
