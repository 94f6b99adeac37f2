import CLibevent
import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection on an ``EventLoop``: non-blocking reads and writes driven by the loop, with
/// promises for what completes later.
///
/// Get one from ``TCPListener`` (accepted) or ``connect(host:port:on:timeout:options:)``. Input is
/// either streamed to a handler (``startReading(_:)``, for servers that parse in place) or pulled
/// with promise reads (``read(maxBytes:)``, ``read(upTo:maxBytes:)``, ``read(exactly:)``), never
/// both. Output is buffered and sent as the socket accepts it (``write(_:)``, ``enqueue(_:)-(Collection<UInt8>)``,
/// ``flush()``), with backpressure through ``isWritable`` and ``onWritable``.
///
/// Every callback and every promise resolution of a connection happens on its loop's thread.
/// Writes, flushes, reads, ``shutdownOutput()`` and ``close(afterFlushing:)`` may be called from
/// any thread: they run at once on the loop's thread, or when no thread drives the loop (the
/// caller takes the loop for the call), and otherwise hop to the loop with `execute`.
/// ``startReading(_:)``, ``stopReading()``, ``resumeReading()`` and the callback properties
/// belong to the loop's thread (or a time when no thread drives it); the state getters
/// (``pendingOutputBytes``, ``isWritable``...) are meaningful there only.
///
/// Every callback (the streaming handler, ``onWritable``, ``onInputClosed``, the `.immediate`
/// callbacks of this connection's promises, ``closed``'s) may call any method of the
/// connection: the connection has finished updating its state before it runs user code, and what
/// a call made inside a callback causes (other callbacks, promise resolutions) runs after that
/// callback returns, in order, never nested inside it. So a promise a callback gets from
/// ``write(_:)``, ``flush()`` or a read settles after the callback, and the write and flush
/// promises that are fulfilled are fulfilled in the order of the calls. The state machine behind
/// this is `TCPConnectionStateMachine` (internal).
///
/// Input is pulled from the socket only while it is wanted (streaming and not stopped, or a
/// promise read pending): a connection that is not reading does not notice that the peer closed
/// until it reads, or until a write fails.
///
/// The loop keeps an open connection alive; it closes every open connection when it shuts down.
/// Closing releases the handler and callbacks, which breaks the usual cycle of a handler that
/// captures its connection. Writes never raise `SIGPIPE` (`MSG_NOSIGNAL`): a dead peer rejects
/// them with ``TCPError/connectionReset``.
public final class TCPConnection: @unchecked Sendable {
    // `@unchecked Sendable`: the immutable stored properties are thread-safe; everything else is
    // loop-confined (touched only on the loop's thread: public methods called elsewhere hop with
    // `loop.execute`, and the loop-only ones check `inEventLoop`).
    // LoopInvariants: "Loop confinement".

    /// The loop whose thread runs this connection's I/O, callbacks and promise resolutions.
    public let loop: EventLoop
    /// The peer's address: "127.0.0.1:54321" or "[::1]:54321".
    public let remoteDescription: String
    /// The local port of the connection.
    public let localPort: UInt16
    /// Resolves once the connection is closed, for any reason (on the loop's thread; called from
    /// inside a callback, after that callback returns): `nil` for an orderly close (our
    /// ``close(afterFlushing:)``, ``shutdownOutput()`` after the peer's end of input, the
    /// streaming default at end of input, the loop's shutdown), the error otherwise (a reset,
    /// ``TCPError/inputLimitExceeded(limit:)``...). Never rejected.
    public let closed: Promise<TCPError?, NoError>

    let closedResolver: Promise<TCPError?, NoError>.Resolver
    /// What carries the bytes: a socket on a libevent loop, a link of a simulated network on a
    /// simulated host's loop (see ``TCPTransport``). Released (``TCPTransport/close()``) when
    /// the connection closes.
    package var transport: any TCPTransport {
        switch carrier {
        case .socket(let socket): socket
        case .other(let other): other
        }
    }
    /// ``transport``, with a socket concrete: the libevent path calls it directly (inlined), not
    /// through the protocol's witness table, whose calls and result enums cost a measurable share
    /// of a round trip (TCPEchoBench).
    let carrier: TCPTransportCarrier
    let options: TCPConnectionOptions

    // MARK: Loop-confined state
    //
    // `@exclusivity(unchecked)`: touched on the loop's thread only, one access at a time (no
    // `inout` access spans a call that could reach another); the dynamic exclusivity checks
    // would be a large share of a promise-read round trip.
    // LoopInvariants: "Loop confinement".

    /// Every decision about what happens next; the flags below are the storage's own (which
    /// interests are set, buffers, counters, waiters).
    @exclusivity(unchecked) var machine = TCPConnectionStateMachine()
    /// Whether the transport's read interest is set (``TCPConnectionStateMachine/wantsReadEvent``).
    @exclusivity(unchecked) var isReadEventAdded = false
    /// Whether the transport's write interest is set: output waits for the transport to take it.
    @exclusivity(unchecked) var isWriteEventAdded = false
    let input = TCPByteBuffer()
    /// The size of the next `recv` (adapts between ``initialReadSize`` and ``maximumReadSize``).
    @exclusivity(unchecked) var readSize = TCPConnection.initialReadSize
    let output = TCPByteBuffer()
    @exclusivity(unchecked) var streamingHandler: ((UnsafeRawBufferPointer) -> Int)?
    @exclusivity(unchecked) var pendingRead: PendingRead?
    @exclusivity(unchecked) var nextReadID: UInt64 = 0
    /// Bytes ever appended to / sent from ``output``: a flush waits for the sent count to reach
    /// the appended count of its time.
    @exclusivity(unchecked) var bytesEnqueued: UInt64 = 0
    @exclusivity(unchecked) var bytesFlushed: UInt64 = 0
    @exclusivity(unchecked) var flushWaiters: [FlushWaiter] = []
    @exclusivity(unchecked) var flushWaitersHead = 0
    /// User code to run once the state is settled, in order (see ``runCallbacks()``).
    @exclusivity(unchecked) var pendingCallbacks: [Callback] = []
    /// Inside ``runCallbacks()`` or the streaming handler: callbacks queued now run after the
    /// current one returns, never nested inside it.
    @exclusivity(unchecked) var isRunningCallbacks = false

    /// Called on the loop's thread when ``isWritable`` turns true again after it was false, while
    /// the connection is open.
    ///
    /// It may call any method of the connection (write more, close...). Read or set it from any
    /// thread (from another one while the loop runs, the access waits for the loop). Released
    /// when the connection closes; once the loop has shut down (which closed the connection) it
    /// reads nil, and a closure set then is released at once, never called.
    public var onWritable: (() -> Void)? {
        // Both accessors go through `withConfinedState`: the storage is loop-confined (the close
        // sets it to nil on the loop's thread), so a read from another thread hops like a write.
        // LoopInvariants: "Loop confinement".
        get {
            loop.withConfinedState("TCPConnection.onWritable", ifShutDown: nil) { [self] in onWritableStorage }
        }
        set {
            loop.withConfinedState("TCPConnection.onWritable") { [self] in onWritableStorage = newValue }
        }
    }
    @exclusivity(unchecked) var onWritableStorage: (() -> Void)?

    /// Called on the loop's thread when the peer sends end of input (a half-close); the streaming
    /// handler gets no more bytes after it.
    ///
    /// When this is nil at the peer's end of input, a connection in streaming mode
    /// (``startReading(_:)``) closes itself after flushing its output, which is what a server
    /// wants; set it to keep the connection half-open and decide yourself. It may call any method
    /// of the connection. Read or set it from any thread (from another one while the loop runs,
    /// the access waits for the loop). Released when the connection closes; once the loop has
    /// shut down it reads nil, and a closure set then is released at once, never called.
    public var onInputClosed: (() -> Void)? {
        // LoopInvariants: "Loop confinement": read where it is written, as for `onWritable`.
        get {
            loop.withConfinedState("TCPConnection.onInputClosed", ifShutDown: nil) { [self] in onInputClosedStorage }
        }
        set {
            loop.withConfinedState("TCPConnection.onInputClosed") { [self] in onInputClosedStorage = newValue }
        }
    }
    @exclusivity(unchecked) var onInputClosedStorage: (() -> Void)?

    /// Makes a connection on `transport` and registers it with `loop`; on the loop's thread.
    package init(transport: any TCPTransport, loop: EventLoop, options: TCPConnectionOptions) {
        if let socket = transport as? TCPSocketTransport {
            carrier = .socket(socket)
        } else {
            carrier = .other(transport)
        }
        self.loop = loop
        self.options = options
        remoteDescription = transport.remoteDescription
        localPort = transport.localPort
        (closed, closedResolver) = Promise<TCPError?, NoError>.makeWithResolver()
        transport.attach(to: self)
        loop.register(resource: self)
    }

    /// The socket of a connection on a libevent loop, -1 on a simulated network (for the tests
    /// that look at the kernel's side of a connection).
    var fd: Int32 {
        if case .socket(let socket) = carrier { return socket.fd }
        return -1
    }

    /// The transport has input, end of input or an error for the connection (it only says so
    /// while the read interest is set); a callback of the loop.
    package func transportReadable() {
        // Closing unregisters the connection, possibly its last reference: keep it for the
        // callbacks that follow.
        withExtendedLifetime(self) {
            loop.withCallbackEntered {
                handleReadable()
                runCallbacks()
            }
        }
    }

    /// The transport takes bytes again (it only says so while the write interest is set); a
    /// callback of the loop.
    package func transportWritable() {
        withExtendedLifetime(self) {
            loop.withCallbackEntered {
                flushOutput()
                runCallbacks()
            }
        }
    }

    /// Whether the connection is closed (or closing after a flush). Loop thread.
    public var isClosed: Bool {
        machine.lifecycle != .open
    }

    /// Closes the connection.
    ///
    /// With `afterFlushing: false` the socket closes now and pending output is dropped. With
    /// `afterFlushing: true` input stops, pending output is sent, then the socket closes (a
    /// send error closes it with that error). Pending reads reject with ``TCPError/closed``; so
    /// do pending writes and flushes when output is dropped. ``closed`` resolves with `nil`.
    ///
    /// Idempotent; safe from any thread (it hops to the loop; after the loop shut down it does
    /// nothing, the loop having closed the connection), and from any callback of this connection
    /// (the callbacks it causes run after the current one returns).
    public func close(afterFlushing: Bool = false) {
        if !loop.inEventLoop {
            _ = loop.submitOnLoop(runsInlineWhenPossible: true) { [self] in close(afterFlushing: afterFlushing) }
            return
        }
        closeOnLoop(afterFlushing: afterFlushing)
        runCallbacks()
    }

    /// ``close(afterFlushing:)``'s transition and actions, without running the callbacks.
    func closeOnLoop(afterFlushing: Bool) {
        switch machine.close(afterFlushing: afterFlushing, hasPendingOutput: output.readableBytes > 0) {
        case .none:
            return
        case .closeNow:
            finishClose(result: nil, pendingError: .closed)
        case .closeAfterFlush(let rejectRead):
            syncReadInterest()
            if rejectRead, let read = takePendingRead() {
                pendingCallbacks.append(.read(read.resolver, .failure(.closed)))
            }
        }
    }

    /// Closes with `error`: pending operations reject with it and ``closed`` resolves with it.
    /// The callbacks run at the caller's next ``runCallbacks()``.
    func fail(_ error: TCPError) {
        guard machine.fail() else { return }
        finishClose(result: error, pendingError: error)
    }

    /// Performs a transition to ``TCPConnectionStateMachine/Lifecycle/closed``: closes the
    /// transport (the socket and its events), releases the handler and callbacks, unregisters from the loop, and
    /// queues the rejection of what is pending and the resolution of ``closed``; on the loop's
    /// thread. The machine is already closed.
    func finishClose(result: TCPError?, pendingError: TCPError) {
        transport.close()
        isReadEventAdded = false
        isWriteEventAdded = false
        if let read = takePendingRead() {
            pendingCallbacks.append(.read(read.resolver, .failure(pendingError)))
        }
        for waiter in flushWaiters[flushWaitersHead...] {
            pendingCallbacks.append(.flush(waiter.resolver, pendingError))
        }
        flushWaiters = []
        flushWaitersHead = 0
        streamingHandler = nil
        onWritableStorage = nil
        onInputClosedStorage = nil
        output.consume(output.readableBytes)
        pendingCallbacks.append(.closed(result))
        // The registry's reference may be the last one: whoever called this keeps `self` alive
        // until its ``runCallbacks()`` returned (a method's caller holds a reference; the event
        // callbacks and loop tasks extend the lifetime explicitly).
        loop.unregister(resource: self)
    }
}

extension TCPConnection: EventLoopResource {
    func closeForShutdown() {
        withExtendedLifetime(self) {
            guard machine.fail() else { return }
            finishClose(result: nil, pendingError: .closed)
            runCallbacks()
        }
    }
}

/// `close(2)`, under a name that does not collide with the types' own `close` methods.
func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
