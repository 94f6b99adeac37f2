import KeyValueCore
import Logging
import Tomorrowland
import TomorrowlandLoop

/// One client of the daemon: parses its requests in place as they arrive, executes them, and
/// sends the replies of each read in one write.
///
/// Pipelining: every complete request of a read is executed in order and its reply appended to
/// one buffer, which the connection sends when the read handler returns. Backpressure: once the
/// replies of one read reach `replyBudget` bytes, or the output passes the connection's
/// high-water mark, the connection stops reading requests (the rest stays buffered) until the
/// output drains, so a client that does not read its replies holds about one budget of replies
/// plus the high-water mark, however many requests it pipelines.
///
/// Not `Sendable`: everything runs on the connection's loop thread (the read handler,
/// `onWritable`, the idle timer and close callbacks). The two callbacks that must be `@Sendable`
/// (the idle timer's and the `closed` promise's) reach the connection through a `LoopBound` box,
/// which checks that they do run there.
final class ClientConnection {
    let connection: TCPConnection
    private var parser: RESPParser
    /// Empty until the first reply: an idle connection holds no reply storage (see
    /// `retainedReplyCapacity`).
    private var replies = RESPReplyWriter(capacity: 0)
    private let processor: CommandProcessor
    private let idleTimeout: Duration?
    private let logger: Logger
    /// On the loop's clock (`loop.now`), so that the idle timeout runs on virtual time when the
    /// daemon runs on a simulated host.
    private var lastActivity: Duration
    private var idleTimer: (any PromiseScheduledWork)?
    private var isClosing = false
    /// Replies encoded per read before the connection pauses for the output to drain.
    static let replyBudget = 1 << 20
    /// Reply storage a connection keeps between reads; larger storage is freed once its replies are
    /// handed to the connection. Pipelined small replies fit, so a busy connection allocates no
    /// reply storage per read, and one large reply is not held for the connection's life.
    static let retainedReplyCapacity = 4096

    init(
        connection: TCPConnection, processor: CommandProcessor, maxRequestBytes: Int, idleTimeout: Duration?,
        logger: Logger
    ) {
        self.connection = connection
        self.processor = processor
        self.parser = RESPParser(maxRequestBytes: maxRequestBytes)
        self.idleTimeout = idleTimeout
        self.logger = logger
        lastActivity = connection.loop.now
    }

    /// Starts serving; `onClose` runs on the loop thread once the connection has closed. Call it
    /// on the connection's loop thread.
    func start(onClose: @escaping @Sendable () -> Void) {
        // The box keeps the connection alive until `closed` resolves, and while an idle timer is
        // pending (cancelled there).
        let this = LoopBound(isolatedValue: self, on: connection.loop)
        connection.startReading { [weak self] input in
            self?.handle(input) ?? input.count
        }
        connection.onWritable = { [weak self] in
            guard let self, !self.isClosing else { return }
            self.connection.resumeReading()
        }
        connection.onInputClosed = { [weak self] in
            // The client sent EOF: its requests were all answered in the read handler.
            self?.close(afterFlushing: true)
        }
        armIdleTimer(after: idleTimeout, this)
        _ = connection.closed.then(on: .loop(connection.loop)) { error in
            this.value.closed(error: error)
            onClose()
        }
    }

    /// The connection closed: stops the idle timer.
    private func closed(error: TCPError?) {
        idleTimer?.cancel()
        idleTimer = nil
        if let error {
            logger.debug(
                "client closed", metadata: ["peer": "\(connection.remoteDescription)", "error": "\(error)"])
        } else {
            logger.debug("client closed", metadata: ["peer": "\(connection.remoteDescription)"])
        }
    }

    /// Closes after the replies produced so far are sent (used at shutdown).
    func close(afterFlushing: Bool) {
        isClosing = true
        connection.close(afterFlushing: afterFlushing)
    }

    /// Executes every complete request in `input`; returns the bytes consumed.
    private func handle(_ input: UnsafeRawBufferPointer) -> Int {
        if idleTimeout != nil { lastActivity = connection.loop.now }
        guard !isClosing else { return input.count }
        let (consumed, ending) = processor.executeAll(
            input, parser: &parser, into: &replies, replyBudget: Self.replyBudget)
        switch ending {
        case .needsMoreInput, .overBudget:
            break
        case .close:
            isClosing = true
        case .protocolError(let error):
            // As Redis: answer, then close; nothing after the bad bytes is read.
            logger.info(
                "protocol error, closing",
                metadata: ["peer": "\(connection.remoteDescription)", "error": "\(error.reason)"])
            isClosing = true
        }
        if !replies.bytes.isEmpty {
            replies.bytes.withUnsafeBytes { connection.enqueue($0) }
            replies.removeAll(keepingCapacityUpTo: Self.retainedReplyCapacity)
        }
        if isClosing {
            connection.close(afterFlushing: true)
            return input.count
        }
        if !connection.isWritable {
            // The client is not reading its replies: stop reading its requests (resumed by onWritable).
            connection.stopReading()
        } else if ending == .overBudget {
            // The output is below the mark, so no onWritable will come: stopping and resuming at
            // once hands the requests still buffered to this handler again on a later tick.
            connection.stopReading()
            connection.resumeReading()
        }
        return consumed
    }

    /// Arms the idle check; `this` is this connection's box, for the timer's `@Sendable` work.
    private func armIdleTimer(after delay: Duration?, _ this: LoopBound<ClientConnection>) {
        guard let delay else { return }
        idleTimer = connection.loop.schedule(after: delay) {
            this.value.checkIdle(this)
        }
    }

    private func checkIdle(_ this: LoopBound<ClientConnection>) {
        guard let idleTimeout, !isClosing else { return }
        let idle = connection.loop.now - lastActivity
        if idle >= idleTimeout {
            logger.info("idle timeout, closing", metadata: ["peer": "\(connection.remoteDescription)"])
            close(afterFlushing: true)
        } else {
            armIdleTimer(after: idleTimeout - idle, this)
        }
    }
}
