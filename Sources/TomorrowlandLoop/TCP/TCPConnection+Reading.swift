import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

extension TCPConnection {
    /// A promise read waiting for input.
    struct PendingRead {
        enum Kind: Sendable {
            /// Whatever is buffered, up to a count; `[]` at end of input.
            case available(maxBytes: Int)
            /// Up to and including a delimiter found within `maxBytes`.
            case delimiter([UInt8], maxBytes: Int)
            /// Exactly a count.
            case exactly(Int)
        }

        let id: UInt64
        let kind: Kind
        let resolver: Promise<[UInt8], TCPError>.Resolver
        /// How far a delimiter search already looked (it resumes there).
        var scanned = 0
    }

    /// The most bytes one readiness callback reads before it hands them over.
    static let readBudget = 256 * 1024
    /// The first `recv` size of a connection: small, so that many idle connections stay cheap.
    static let initialReadSize = 2048
    /// The largest `recv` size: a connection's read size doubles up to this each time a `recv`
    /// fills the space it was given (bulk transfers), and halves when one uses less than a
    /// quarter.
    static let maximumReadSize = 64 * 1024

    // MARK: Streaming input

    /// Streams input to `handler`: whenever bytes arrive, it is called on the loop's thread with
    /// all buffered, unconsumed input (one contiguous region, valid only during the call) and
    /// returns how many bytes it consumed from the front; the rest stays buffered and is passed
    /// again, with the next bytes, on the next call.
    ///
    /// Output written inside the handler is sent when it returns, in one `send`. When buffered
    /// input passes ``TCPConnectionOptions/maxInputBytes`` the connection closes with
    /// ``TCPError/inputLimitExceeded(limit:)``. At the peer's end of input ``onInputClosed`` is
    /// called (or, when it is nil, the connection closes after flushing).
    ///
    /// The handler may call any method of the connection (write, close, ``stopReading()``...);
    /// promise callbacks and other callbacks those calls cause run after the handler returns.
    ///
    /// - Important: Safe from any thread (from another thread while the loop runs, it waits for
    ///   the loop to take the handler); once per
    ///   connection; exclusive with the promise reads (precondition).
    public func startReading(_ handler: @escaping (UnsafeRawBufferPointer) -> Int) {
        loop.withConfinedState("TCPConnection.startReading(_:)") { [self] in beginStreaming(handler) }
    }

    private func beginStreaming(_ handler: @escaping (UnsafeRawBufferPointer) -> Int) {
        switch machine.startStreaming(hasBufferedInput: input.readableBytes > 0) {
        case .misuse:
            preconditionFailure(
                "TCPConnection.startReading(_:) called on a connection that already streams or has a promise read pending; use one input style per connection"
            )
        case .ignored:
            return
        case .started(let deliverBuffered):
            streamingHandler = handler
            syncReadInterest()
            if deliverBuffered { deliverLater() }
        }
    }

    /// Stops pulling bytes from the socket, so the peer's sends stall once the kernel buffers fill
    /// (backpressure). The handler is not called until ``resumeReading()``. Loop thread (or while no
    /// thread drives the loop).
    public func stopReading() {
        loop.withConfinedState("TCPConnection.stopReading()") { [self] in
            machine.stopReading()
            syncReadInterest()
        }
    }

    /// Resumes reading after ``stopReading()``; input still buffered is handed to the handler
    /// soon (not inside this call). Safe from any thread (waits for a running loop).
    public func resumeReading() {
        loop.withConfinedState("TCPConnection.resumeReading()") { [self] in
            let deliver = machine.resumeReading(hasBufferedInput: input.readableBytes > 0)
            syncReadInterest()
            if deliver { deliverLater() }
        }
    }

    /// Bytes received and not yet consumed. Loop thread.
    public var bufferedInputBytes: Int {
        input.readableBytes
    }

    // MARK: Promise reads

    /// Reads what is available, up to `maxBytes`: resolves as soon as at least one byte is
    /// buffered, with `[]` at the peer's end of input.
    ///
    /// One read may be outstanding at a time (precondition): chain the next read on this one's
    /// promise. Cancelling the promise abandons the read (buffered bytes stay). Safe from any
    /// thread and from any callback of this connection (a read started in the previous read's
    /// callback is the usual chain); resolves on the loop's thread. Rejects with
    /// ``TCPError/closed`` on a closed connection, or with the error that closed it.
    public func read(maxBytes: Int = 65_536) -> Promise<[UInt8], TCPError> {
        precondition(maxBytes > 0, "TCPConnection.read(maxBytes:) needs maxBytes > 0")
        return beginRead(.available(maxBytes: maxBytes))
    }

    /// Reads up to and including the first `delimiter`, which must occur within the first
    /// `maxBytes` bytes: otherwise the read rejects with ``TCPError/inputLimitExceeded(limit:)``
    /// (`limit` is `maxBytes`; the bytes stay buffered). Rejects with ``TCPError/endOfInput`` if
    /// the peer ends its input first. Same rules as ``read(maxBytes:)``.
    public func read(upTo delimiter: [UInt8], maxBytes: Int) -> Promise<[UInt8], TCPError> {
        precondition(!delimiter.isEmpty, "TCPConnection.read(upTo:maxBytes:) needs a non-empty delimiter")
        precondition(
            maxBytes >= delimiter.count, "TCPConnection.read(upTo:maxBytes:) needs maxBytes >= the delimiter's length")
        return beginRead(.delimiter(delimiter, maxBytes: maxBytes))
    }

    /// Reads exactly `count` bytes. Rejects with ``TCPError/endOfInput`` if the peer ends its
    /// input first. While it is pending the input bound is at least `count`. Same rules as
    /// ``read(maxBytes:)``.
    public func read(exactly count: Int) -> Promise<[UInt8], TCPError> {
        precondition(count >= 0, "TCPConnection.read(exactly:) needs count >= 0")
        return beginRead(.exactly(count))
    }

    private func beginRead(_ kind: PendingRead.Kind) -> Promise<[UInt8], TCPError> {
        let (promise, resolver) = Promise<[UInt8], TCPError>.makeWithResolver()
        if loop.inEventLoop {
            registerRead(kind, resolver)
            runCallbacks()
        } else {
            let accepted = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in
                registerRead(kind, resolver)
                runCallbacks()
            }
            if !accepted { resolver.reject(with: .closed) }
        }
        return promise
    }

    private func registerRead(_ kind: PendingRead.Kind, _ resolver: Promise<[UInt8], TCPError>.Resolver) {
        switch machine.startRead() {
        case .misuseStreaming:
            preconditionFailure(
                "TCPConnection promise reads cannot be used after startReading(_:); use one input style per connection"
            )
        case .misuseOutstanding:
            preconditionFailure(
                "TCPConnection: a read is already outstanding; chain the next read on the previous read's promise"
            )
        case .rejectClosed:
            pendingCallbacks.append(.read(resolver, .failure(.closed)))
            return
        case .pending:
            break
        }
        nextReadID += 1
        let id = nextReadID
        pendingRead = PendingRead(id: id, kind: kind, resolver: resolver)
        resolver.onRequestCancel(on: .immediate) { [weak self] resolver in
            guard let self else { return }
            if loop.inEventLoop {
                cancelRead(id: id, resolver)
            } else {
                _ = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in cancelRead(id: id, resolver) }
            }
        }
        completePendingRead()
        if pendingRead != nil {
            syncReadInterest()
            // The input bound depends on the pending read.
            enforceInputLimit()
        }
    }

    private func cancelRead(id: UInt64, _ resolver: Promise<[UInt8], TCPError>.Resolver) {
        guard pendingRead?.id == id else { return }
        pendingRead = nil
        pendingCallbacks.append(.readCancelled(resolver))
        if machine.finishRead(hasBufferedInput: input.readableBytes > 0) {
            finishClose(result: nil, pendingError: .closed)
        }
        syncReadInterest()
        runCallbacks()
    }

    /// Takes the pending read out (so that resolving it can start the next one).
    func takePendingRead() -> PendingRead? {
        defer { pendingRead = nil }
        return pendingRead
    }

    /// Resolves the pending read if the buffered input (or end of input) allows; queues the
    /// outcome (the caller runs the callbacks).
    func completePendingRead() {
        guard var read = pendingRead else { return }
        let outcome: Result<[UInt8], TCPError>?
        switch read.kind {
        case .available(let maxBytes):
            if input.readableBytes > 0 {
                outcome = .success(input.take(Swift.min(maxBytes, input.readableBytes)))
            } else if machine.isInputEnded {
                outcome = .success([])
            } else {
                outcome = nil
            }
        case .delimiter(let delimiter, let maxBytes):
            let start = Swift.max(0, read.scanned - delimiter.count + 1)
            if let index = input.firstIndex(of: delimiter, from: start), index + delimiter.count <= maxBytes {
                outcome = .success(input.take(index + delimiter.count))
            } else if input.readableBytes >= maxBytes {
                outcome = .failure(.inputLimitExceeded(limit: maxBytes))
            } else if machine.isInputEnded {
                outcome = .failure(.endOfInput)
            } else {
                read.scanned = input.readableBytes
                pendingRead = read
                outcome = nil
            }
        case .exactly(let count):
            if input.readableBytes >= count {
                outcome = .success(input.take(count))
            } else if machine.isInputEnded {
                outcome = .failure(.endOfInput)
            } else {
                outcome = nil
            }
        }
        guard let outcome else { return }
        pendingRead = nil
        pendingCallbacks.append(.read(read.resolver, outcome))
        if machine.finishRead(hasBufferedInput: input.readableBytes > 0) {
            finishClose(result: nil, pendingError: .closed)
        }
        syncReadInterest()
    }

    // MARK: Socket input

    /// Adds or removes the read event to match ``TCPConnectionStateMachine/wantsReadEvent``.
    func syncReadInterest() {
        guard machine.lifecycle != .closed else { return }
        let wanted = machine.wantsReadEvent
        guard wanted != isReadEventAdded else { return }
        carrier.setReadInterest(wanted)
        isReadEventAdded = wanted
    }

    /// The current bound on buffered input.
    var inputLimit: Int {
        switch pendingRead?.kind {
        case .exactly(let count): Swift.max(options.maxInputBytes, count)
        case .delimiter(_, let maxBytes): Swift.max(options.maxInputBytes, maxBytes)
        default: options.maxInputBytes
        }
    }

    /// The transport is readable: reads what it has (up to ``readBudget``), hands it over, and
    /// handles end of input and errors.
    func handleReadable() {
        guard machine.lifecycle == .open, !machine.isInputEnded else { return }
        var total = 0
        var endOfInput = false
        while total < Self.readBudget {
            // Never read more than one byte past the bound: the buffer stays bounded by it.
            let allowed = inputLimit + 1 - input.readableBytes
            guard allowed > 0 else { break }
            let space = input.reserveWritable(Swift.min(readSize, allowed))
            // LoopInvariants: "Byte buffer regions": `space` is used only until `commitWritten`.
            let requested = Swift.min(space.count, allowed)
            switch carrier.receive(into: UnsafeMutableRawBufferPointer(rebasing: space[..<requested])) {
            case .received(let count):
                input.commitWritten(count)
                total += count
                if count == requested {
                    readSize = Swift.min(readSize * 2, Self.maximumReadSize)
                    continue
                }
                if count < requested / 4 { readSize = Swift.max(readSize / 2, Self.initialReadSize) }
            case .endOfInput:
                endOfInput = true
            case .wouldBlock:
                break
            case .failed(let error):
                // What arrived before the error is handed over first, as the kernel hands over
                // the bytes that came before a reset.
                if total > 0 { deliverInput() }
                fail(error)
                return
            }
            break
        }
        deliverInput()
        if endOfInput { handleEndOfInput() }
    }

    /// Hands buffered input to the streaming handler or the pending read, then enforces the
    /// input bound. The callbacks it queues run at the caller's ``runCallbacks()``.
    func deliverInput() {
        guard machine.lifecycle == .open else { return }
        switch machine.reader {
        case .streaming:
            let available = input.readableBytes
            guard machine.startDelivery(hasBufferedInput: available > 0), let handler = streamingHandler else { break }
            // The handler is user code: what it causes is queued behind it, as in a callback.
            let wasRunningCallbacks = isRunningCallbacks
            isRunningCallbacks = true
            // LoopInvariants: "Byte buffer regions": nothing the handler can call mutates `input`.
            let consumed = handler(input.readableRegion)
            isRunningCallbacks = wasRunningCallbacks
            // Closed inside the handler: the machine left the delivery and the input is moot.
            guard machine.lifecycle != .closed else { return }
            precondition(
                consumed >= 0 && consumed <= available,
                "TCPConnection streaming handler returned \(consumed), outside 0...\(available); return how many bytes of the buffer you consumed"
            )
            input.consume(consumed)
            if machine.finishDelivery(hasPendingOutput: output.readableBytes > 0) && !isWriteEventAdded {
                flushOutput()
            }
        case .reading:
            completePendingRead()
        case .idle:
            break
        }
        enforceInputLimit()
    }

    /// Closes with ``TCPError/inputLimitExceeded(limit:)`` if buffered input passed its bound.
    func enforceInputLimit() {
        guard machine.lifecycle == .open, input.readableBytes > inputLimit else { return }
        fail(.inputLimitExceeded(limit: inputLimit))
    }

    /// Delivers buffered input on a later turn of the loop (never inside the caller's call).
    func deliverLater() {
        _ = loop.submitOnLoop { [self] in
            deliverInput()
            if machine.closeIfBothDirectionsEnded(hasBufferedInput: input.readableBytes > 0) {
                finishClose(result: nil, pendingError: .closed)
            }
            runCallbacks()
        }
    }

    /// The peer sent end of input.
    func handleEndOfInput() {
        let decision = machine.endOfInput(
            hasInputClosedHandler: onInputClosedStorage != nil, hasPendingOutput: output.readableBytes > 0,
            hasBufferedInput: input.readableBytes > 0)
        syncReadInterest()
        switch decision {
        case .none, .closingAfterFlush:
            break
        case .notifyHandler:
            if let onInputClosed = onInputClosedStorage { pendingCallbacks.append(.inputClosed(onInputClosed)) }
            if machine.closeIfBothDirectionsEnded(hasBufferedInput: input.readableBytes > 0) {
                finishClose(result: nil, pendingError: .closed)
            }
        case .closed, .closedBothEnded:
            finishClose(result: nil, pendingError: .closed)
        case .completeRead:
            completePendingRead()
        }
    }
}
