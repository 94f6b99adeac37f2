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
    /// copied, then the call hops to the loop).
    public func write(_ bytes: some Collection<UInt8>) -> Promise<Void, TCPError> {
        let (promise, resolver) = Promise<Void, TCPError>.makeWithResolver()
        if loop.inEventLoop {
            guard acceptsOutput else {
                resolver.reject(with: .closed)
                return promise
            }
            appendOutput(bytes)
            addFlushWaiter(resolver)
        } else {
            let copy = Array(bytes)
            let accepted = loop.performOnLoop { [self] in
                guard acceptsOutput else {
                    resolver.reject(with: .closed)
                    return
                }
                appendOutput(copy)
                addFlushWaiter(resolver)
            }
            if !accepted { resolver.reject(with: .closed) }
        }
        return promise
    }

    /// Appends a copy of `bytes` to the output, without a promise: the cheap path for servers.
    ///
    /// Inside the streaming handler, output is sent when the handler returns; elsewhere it is sent
    /// at once, as far as the socket accepts it. Dropped silently if the connection is closed or
    /// its output was shut down (``closed`` tells why). Safe from any thread (copies, then hops).
    public func enqueue(_ bytes: UnsafeRawBufferPointer) {
        if loop.inEventLoop {
            guard acceptsOutput else { return }
            appendOutput(bytes)
        } else {
            enqueueOffLoop(Array(bytes))
        }
    }

    /// Appends a copy of `bytes` to the output, without a promise; see ``enqueue(_:)-(UnsafeRawBufferPointer)``.
    public func enqueue(_ bytes: some Collection<UInt8>) {
        if loop.inEventLoop {
            guard acceptsOutput else { return }
            appendOutput(bytes)
        } else {
            enqueueOffLoop(Array(bytes))
        }
    }

    /// Resolves once everything enqueued or written so far has been handed to the kernel.
    ///
    /// Rejects with ``TCPError/closed`` if the connection closes first (or is closed), or with
    /// the error that closed it. Safe from any thread; resolves on the loop's thread.
    public func flush() -> Promise<Void, TCPError> {
        let (promise, resolver) = Promise<Void, TCPError>.makeWithResolver()
        if loop.inEventLoop {
            addFlushWaiter(resolver)
        } else if !loop.performOnLoop({ [self] in addFlushWaiter(resolver) }) {
            resolver.reject(with: .closed)
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
        if !writable { wasUnwritable = true }
        return writable
    }

    /// Half-close: once pending output is sent, shuts down the sending side (the peer reads end
    /// of input); reading goes on. Later writes reject with ``TCPError/closed``. When the peer
    /// has also ended its input and everything was read, the connection closes (``closed``
    /// resolves with `nil`).
    ///
    /// Idempotent; safe from any thread.
    public func shutdownOutput() {
        if !loop.inEventLoop {
            _ = loop.performOnLoop { [self] in shutdownOutput() }
            return
        }
        guard state == .open, !isOutputShutdownRequested else { return }
        isOutputShutdownRequested = true
        if output.readableBytes == 0 && !isFlushing { flushOutput() }
    }

    // MARK: Internals

    /// Whether new output is taken.
    var acceptsOutput: Bool {
        state == .open && !isOutputShutdownRequested
    }

    private func enqueueOffLoop(_ copy: [UInt8]) {
        _ = loop.performOnLoop { [self] in
            guard acceptsOutput else { return }
            appendOutput(copy)
        }
    }

    func appendOutput(_ bytes: UnsafeRawBufferPointer) {
        output.append(bytes)
        outputAppended(bytes.count)
    }

    func appendOutput(_ bytes: some Collection<UInt8>) {
        let before = output.readableBytes
        output.append(bytes)
        outputAppended(output.readableBytes - before)
    }

    private func outputAppended(_ count: Int) {
        bytesEnqueued &+= UInt64(count)
        if output.readableBytes >= options.writeHighWaterMark { wasUnwritable = true }
        // Inside the handler the output goes out when it returns; with the write event added it
        // goes when the socket has room.
        if !isDeliveringInput && !isWriteEventAdded && !isFlushing { flushOutput() }
    }

    func addFlushWaiter(_ resolver: Promise<Void, TCPError>.Resolver) {
        guard state != .closed else {
            resolver.reject(with: .closed)
            return
        }
        if bytesFlushed >= bytesEnqueued {
            resolver.fulfill(with: ())
            return
        }
        flushWaiters.append(FlushWaiter(target: bytesEnqueued, resolver: resolver))
    }

    /// Sends as much pending output as the socket takes, then resolves the flushes that
    /// completed, reports writability, and finishes a pending half-close or close.
    func flushOutput() {
        guard state != .closed, !isFlushing else { return }
        isFlushing = true
        var failure: TCPError?
        while output.readableBytes > 0 {
            let region = output.readableRegion
            // MSG_NOSIGNAL: a dead peer gives EPIPE here instead of killing the process.
            let sent = send(fd, region.baseAddress, region.count, Int32(MSG_NOSIGNAL))
            if sent >= 0 {
                output.consume(sent)
                bytesFlushed &+= UInt64(sent)
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code != EAGAIN && code != EWOULDBLOCK { failure = .fromSocketErrno(code) }
            break
        }
        isFlushing = false
        if let failure {
            fail(failure)
            return
        }
        setWriteInterest(output.readableBytes > 0)

        var completed: [Promise<Void, TCPError>.Resolver] = []
        while flushWaitersHead < flushWaiters.count, flushWaiters[flushWaitersHead].target <= bytesFlushed {
            completed.append(flushWaiters[flushWaitersHead].resolver)
            flushWaitersHead += 1
        }
        if flushWaitersHead == flushWaiters.count {
            flushWaiters.removeAll(keepingCapacity: true)
            flushWaitersHead = 0
        }
        let becameWritable = wasUnwritable && output.readableBytes < options.writeHighWaterMark
        if becameWritable { wasUnwritable = false }
        if output.readableBytes == 0 && isOutputShutdownRequested && !isOutputShutDown {
            isOutputShutDown = true
            _ = shutdown(fd, Int32(SHUT_WR))
        }

        for resolver in completed { resolver.fulfill(with: ()) }
        if becameWritable, state == .open, let onWritable = onWritableStorage { onWritable() }
        // Look at the buffer again: the callbacks above may have queued more output (sent in part
        // by a nested flush) and asked to close after flushing it. Closing on the state from
        // before them would drop those bytes.
        guard output.readableBytes == 0 else { return }
        if state == .closingAfterFlush {
            finishClose(result: nil, pendingError: .closed)
        } else {
            closeIfBothDirectionsEnded()
        }
    }

    /// Adds or removes the write event.
    private func setWriteInterest(_ wanted: Bool) {
        guard let writeEvent, wanted != isWriteEventAdded else { return }
        if wanted {
            event_add(writeEvent, nil)
        } else {
            event_del(writeEvent)
        }
        isWriteEventAdded = wanted
    }
}
