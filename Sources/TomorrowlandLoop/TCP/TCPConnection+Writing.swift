import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

extension TCPConnection {
    /// A ``flush()`` or ``write(_:)`` waiting for the sent count to reach `target`.
    struct FlushWaiter {
        let target: UInt64
        let resolver: Promise<Void, TCPError>.Resolver
    }

    /// Sends `bytes`: resolves once they have been handed to the kernel (sent from this
    /// connection's buffer), on the loop's thread.
    ///
    /// Rejects with ``TCPError/closed`` if the connection is closed (or closing, or its output
    /// was shut down) or closes before the bytes are sent, or with the error that closed it.
    /// Cancelling the promise does not unsend the bytes. Safe from any thread (the bytes are
    /// copied, then the call hops to the loop), and from any callback of this connection.
    public func write(_ bytes: some Collection<UInt8>) -> Promise<Void, TCPError> {
        let (promise, resolver) = Promise<Void, TCPError>.makeWithResolver()
        if loop.inEventLoop {
            writeOnLoop(bytes, resolver)
        } else {
            let copy = Array(bytes)
            let accepted = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in writeOnLoop(copy, resolver) }
            if !accepted { resolver.reject(with: .closed) }
        }
        return promise
    }

    private func writeOnLoop(_ bytes: some Collection<UInt8>, _ resolver: Promise<Void, TCPError>.Resolver) {
        guard machine.acceptsOutput else {
            // Nobody has seen this promise on the loop's thread yet, unless the call hopped: queue
            // the rejection like every other outcome.
            pendingCallbacks.append(.flush(resolver, .closed))
            runCallbacks()
            return
        }
        // The waiter goes in before the send, so that a send that finds the peer gone rejects
        // this write with the error that closed the connection, as `closed` reports it.
        appendOutput(bytes, sendingNow: false)
        addFlushWaiter(resolver)
        sendAppendedOutput()
        runCallbacks()
    }

    /// Appends a copy of `bytes` to the output, without a promise: the cheap path for servers.
    ///
    /// Inside the streaming handler, output is sent when the handler returns; elsewhere it is sent
    /// at once, as far as the socket accepts it. Dropped silently if the connection is closed or
    /// its output was shut down (``closed`` tells why). Safe from any thread (copies, then hops),
    /// and from any callback of this connection.
    public func enqueue(_ bytes: UnsafeRawBufferPointer) {
        // LoopInvariants: "Byte buffer regions": `bytes` is copied before this returns.
        if loop.inEventLoop {
            guard machine.acceptsOutput else { return }
            appendOutput(bytes)
            runCallbacks()
        } else {
            enqueueOffLoop(Array(bytes))
        }
    }

    /// Appends a copy of `bytes` to the output, without a promise; see ``enqueue(_:)-(UnsafeRawBufferPointer)``.
    public func enqueue(_ bytes: some Collection<UInt8>) {
        if loop.inEventLoop {
            guard machine.acceptsOutput else { return }
            appendOutput(bytes)
            runCallbacks()
        } else {
            enqueueOffLoop(Array(bytes))
        }
    }

    /// Resolves once everything enqueued or written so far has been handed to the kernel.
    ///
    /// Rejects with ``TCPError/closed`` if the connection closes first (or is closed), or with
    /// the error that closed it. Safe from any thread, and from any callback of this connection
    /// (the promise then settles after the callback returns, in order with earlier writes);
    /// resolves on the loop's thread.
    public func flush() -> Promise<Void, TCPError> {
        let (promise, resolver) = Promise<Void, TCPError>.makeWithResolver()
        if loop.inEventLoop {
            addFlushWaiter(resolver)
            runCallbacks()
        } else {
            let accepted = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in
                addFlushWaiter(resolver)
                runCallbacks()
            }
            if !accepted { resolver.reject(with: .closed) }
        }
        return promise
    }

    /// Output bytes not yet handed to the kernel. Loop thread.
    public var pendingOutputBytes: Int {
        output.readableBytes
    }

    /// Whether ``pendingOutputBytes`` is below ``TCPConnectionOptions/writeHighWaterMark``. Once
    /// this was seen false, ``onWritable`` is called when it turns true again. Loop thread.
    public var isWritable: Bool {
        let writable = output.readableBytes < options.writeHighWaterMark
        if !writable { machine.noteUnwritable() }
        return writable
    }

    /// Half-close: once pending output is sent, shuts down the sending side (the peer reads end
    /// of input); reading goes on. Later writes reject with ``TCPError/closed``. When the peer
    /// has also ended its input and everything was read, the connection closes (``closed``
    /// resolves with `nil`).
    ///
    /// Idempotent; safe from any thread, and from any callback of this connection.
    public func shutdownOutput() {
        if !loop.inEventLoop {
            _ = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in shutdownOutput() }
            return
        }
        let decision = machine.shutdownOutput(
            hasPendingOutput: output.readableBytes > 0, hasBufferedInput: input.readableBytes > 0)
        if case .now(let thenClose) = decision {
            transport.shutdownOutput()
            if thenClose { finishClose(result: nil, pendingError: .closed) }
        }
        runCallbacks()
    }

    // MARK: Internals

    private func enqueueOffLoop(_ copy: [UInt8]) {
        _ = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in
            guard machine.acceptsOutput else { return }
            appendOutput(copy)
            runCallbacks()
        }
    }

    func appendOutput(_ bytes: UnsafeRawBufferPointer) {
        output.append(bytes)
        outputAppended(bytes.count)
        sendAppendedOutput()
    }

    /// Appends `bytes` to the output and, unless `sendingNow` is false (the caller sends with
    /// ``sendAppendedOutput()``), sends what the transport takes now.
    func appendOutput(_ bytes: some Collection<UInt8>, sendingNow: Bool = true) {
        let before = output.readableBytes
        output.append(bytes)
        outputAppended(output.readableBytes - before)
        if sendingNow { sendAppendedOutput() }
    }

    private func outputAppended(_ count: Int) {
        bytesEnqueued &+= UInt64(count)
        if output.readableBytes >= options.writeHighWaterMark { machine.noteUnwritable() }
    }

    /// Sends appended output now, unless it must wait: inside the handler the output goes out
    /// when it returns; with the write event added it goes when the transport has room.
    private func sendAppendedOutput() {
        if machine.sendsAppendedOutput && !isWriteEventAdded { flushOutput() }
    }

    /// Queues `resolver` behind the output appended so far; without running callbacks.
    func addFlushWaiter(_ resolver: Promise<Void, TCPError>.Resolver) {
        if machine.lifecycle == .closed {
            pendingCallbacks.append(.flush(resolver, .closed))
        } else if bytesFlushed >= bytesEnqueued && flushWaitersHead == flushWaiters.count {
            // Settles after the waiters before it (queued callbacks run in order).
            pendingCallbacks.append(.flush(resolver, nil))
        } else {
            flushWaiters.append(FlushWaiter(target: bytesEnqueued, resolver: resolver))
        }
    }

    /// Sends as much pending output as the transport takes, then queues the flushes that completed,
    /// and performs what the machine decides: shut down the sending side, call `onWritable`,
    /// close. Never runs user code itself (the caller runs the callbacks).
    func flushOutput() {
        guard machine.lifecycle != .closed else { return }
        var failure: TCPError?
        sending: while output.readableBytes > 0 {
            switch carrier.send(output.readableRegion) {
            case .sent(let sent) where sent > 0:
                output.consume(sent)
                bytesFlushed &+= UInt64(sent)
            case .sent, .wouldBlock:
                break sending
            case .failed(let error):
                failure = error
                break sending
            }
        }
        if let failure {
            fail(failure)
            return
        }
        let drained = output.readableBytes == 0
        setWriteInterest(!drained)

        while flushWaitersHead < flushWaiters.count, flushWaiters[flushWaitersHead].target <= bytesFlushed {
            pendingCallbacks.append(.flush(flushWaiters[flushWaitersHead].resolver, nil))
            flushWaitersHead += 1
        }
        if flushWaitersHead == flushWaiters.count {
            flushWaiters.removeAll(keepingCapacity: true)
            flushWaitersHead = 0
        }
        let after = machine.sent(
            drained: drained, belowHighWaterMark: output.readableBytes < options.writeHighWaterMark,
            hasBufferedInput: input.readableBytes > 0)
        if after.shutDownOutput { transport.shutdownOutput() }
        if after.notifyWritable { pendingCallbacks.append(.writable) }
        if after.closed { finishClose(result: nil, pendingError: .closed) }
    }

    /// Adds or removes the write event.
    private func setWriteInterest(_ wanted: Bool) {
        guard wanted != isWriteEventAdded else { return }
        carrier.setWriteInterest(wanted)
        isWriteEventAdded = wanted
    }
}
