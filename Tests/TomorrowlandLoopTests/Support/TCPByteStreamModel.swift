import TomorrowlandLoop

/// The reference model of a ``TomorrowlandLoop/TCPConnection``'s two byte streams, fed with what
/// a model program did, in the order it happened; it says what the connection may answer.
///
/// Output: a call's bytes are taken while the connection is open and its output not shut down;
/// outside the streaming handler they go to the socket at once (programs write little, the
/// socket's buffer always has room), inside it they wait for the handler to return; closing now
/// drops what waits. The peer must receive exactly the sent chunks, in order.
///
/// Input: the peer's bytes are consumed in order, by the handler or by promise reads, each of
/// which must see exactly the next bytes.
///
/// The only thing the model cannot time is the connection closing itself once both directions
/// ended (our ``TomorrowlandLoop/TCPConnection/shutdownOutput()`` plus the peer's end of input):
/// from then on a flush or read may also reject with ``TomorrowlandLoop/TCPError/closed``.
struct TCPByteStreamModel {
    enum Lifecycle { case open, closingAfterFlush, closed }

    enum ChunkState { case sent, waitingForHandler, dropped }

    /// Bytes taken for output, in call order.
    struct Chunk {
        let bytes: [UInt8]
        var state: ChunkState
    }

    static let delimiter = UInt8(ascii: "\n")

    private(set) var lifecycle = Lifecycle.open
    private(set) var isOutputShutDown = false
    private(set) var peerEnded = false
    private(set) var chunks: [Chunk] = []
    /// Everything the peer sent.
    private(set) var input: [UInt8] = []
    /// How much of ``input`` the connection consumed.
    private(set) var consumed = 0
    private(set) var isReadingPaused = false
    private(set) var hasHandler = false
    private(set) var isInHandler = false

    /// Whether the connection may close by itself (both directions ended) at a time the model
    /// does not see.
    var mayHaveClosedItself: Bool { peerEnded && isOutputShutDown }

    /// The bytes the peer must receive.
    var expectedPeerBytes: [UInt8] {
        chunks.filter { $0.state == .sent }.flatMap(\.bytes)
    }

    /// The peer's byte at `offset`: letters with a newline now and then.
    static func inputByte(at offset: Int) -> UInt8 {
        (UInt64(offset) &* 2_654_435_761) >> 7 % 11 == 0 ? delimiter : UInt8(ascii: "a") + UInt8(offset % 26)
    }

    // MARK: Output

    /// A write or enqueue of `bytes`: returns the chunk's index if taken.
    mutating func output(_ bytes: [UInt8]) -> Int? {
        guard lifecycle == .open && !isOutputShutDown else { return nil }
        chunks.append(Chunk(bytes: bytes, state: isInHandler ? .waitingForHandler : .sent))
        return chunks.count - 1
    }

    mutating func shutdownOutput() {
        if lifecycle == .open { isOutputShutDown = true }
    }

    private var hasWaitingOutput: Bool { chunks.contains { $0.state == .waitingForHandler } }

    mutating func close(afterFlushing: Bool) {
        switch lifecycle {
        case .closed:
            return
        case .closingAfterFlush where afterFlushing:
            return
        default:
            if afterFlushing && hasWaitingOutput {
                lifecycle = .closingAfterFlush
                return
            }
            for index in chunks.indices where chunks[index].state == .waitingForHandler {
                chunks[index].state = .dropped
            }
            lifecycle = .closed
        }
    }

    /// ``TomorrowlandLoop/TCPConnection/closed`` resolved.
    mutating func observedClosed() {
        lifecycle = .closed
    }

    /// The handler is called; it returns with ``handlerReturned()``.
    mutating func handlerCalled() {
        isInHandler = true
    }

    /// The handler returned: what it wrote is sent (unless the connection closed meanwhile,
    /// which dropped it).
    mutating func handlerReturned() {
        isInHandler = false
        for index in chunks.indices where chunks[index].state == .waitingForHandler {
            chunks[index].state = .sent
        }
        if lifecycle == .closingAfterFlush { lifecycle = .closed }
    }

    /// Whether the first `count` chunks were all sent / any of them was dropped.
    func allSent(before count: Int) -> Bool { chunks[..<count].allSatisfy { $0.state == .sent } }
    func anyDropped(before count: Int) -> Bool { chunks[..<count].contains { $0.state == .dropped } }
    func chunkState(_ index: Int) -> ChunkState { chunks[index].state }

    // MARK: Input

    mutating func peerSent(_ count: Int) -> [UInt8] {
        let bytes = (input.count..<input.count + count).map(Self.inputByte(at:))
        input += bytes
        return bytes
    }

    mutating func peerEnd() {
        peerEnded = true
    }

    mutating func startReading() {
        if lifecycle == .open { hasHandler = true }
    }

    mutating func stopReading() {
        isReadingPaused = true
    }

    mutating func resumeReading() {
        isReadingPaused = false
    }

    /// Checks what the handler was given; nil when it is right.
    func checkHandlerInput(_ bytes: [UInt8]) -> String? {
        if lifecycle != .open { return "the handler was called on a connection that is not open" }
        if !hasHandler { return "the handler was called before startReading" }
        if isReadingPaused { return "the handler was called while reading was stopped" }
        if isInHandler { return "the handler was called inside itself" }
        if bytes.isEmpty { return "the handler was called without input" }
        if bytes.count > input.count - consumed || Array(input[consumed..<consumed + bytes.count]) != bytes {
            return
                "the handler was given \(bytes.count) bytes that are not the next input (consumed \(consumed) of \(input.count))"
        }
        return nil
    }

    mutating func consume(_ count: Int) {
        consumed += count
    }

    /// What a promise read asked for.
    enum ReadKind {
        case available(maxBytes: Int)
        case upToNewline(maxBytes: Int)
        case exactly(Int)
    }

    /// Checks a promise read's outcome and consumes what it took; nil when it is right.
    mutating func checkRead(
        _ kind: ReadKind, _ outcome: Result<[UInt8], TCPError>?, cancelRequested: Bool, openAtCall: Bool,
        mayHaveClosedAtCall: Bool
    ) -> String? {
        let remaining = Array(input[consumed...])
        guard let outcome else {
            return cancelRequested ? nil : "the read was cancelled, nobody asked"
        }
        switch outcome {
        case .failure(.closed):
            if lifecycle != .open || !openAtCall || mayHaveClosedItself || mayHaveClosedAtCall { return nil }
            return "the read rejected with closed on an open connection"
        case .failure(let error):
            guard openAtCall else { return "a read on a closed connection did not reject with closed but \(error)" }
            let newline = remaining.firstIndex(of: Self.delimiter)
            switch (kind, error) {
            case (.upToNewline(let maxBytes), .inputLimitExceeded(let limit)):
                if limit == maxBytes && (newline.map { $0 + 1 > maxBytes } ?? true) && remaining.count >= maxBytes {
                    return nil
                }
            case (.upToNewline(let maxBytes), .endOfInput):
                if peerEnded && newline == nil && remaining.count < maxBytes { return nil }
            case (.exactly(let count), .endOfInput):
                if peerEnded && remaining.count < count { return nil }
            default:
                break
            }
            return "the read rejected with \(error); remaining input \(remaining.count) bytes, peer ended \(peerEnded)"
        case .success(let bytes):
            guard openAtCall else { return "a read on a closed connection gave \(bytes.count) bytes" }
            let expected: Bool
            switch kind {
            case .available(let maxBytes):
                expected =
                    bytes.isEmpty
                    ? peerEnded && remaining.isEmpty
                    : bytes.count <= maxBytes && remaining.starts(with: bytes)
            case .upToNewline(let maxBytes):
                let end = remaining.firstIndex(of: Self.delimiter).map { $0 + 1 }
                expected = end == bytes.count && bytes.count <= maxBytes && remaining.starts(with: bytes)
            case .exactly(let count):
                expected = bytes.count == count && remaining.starts(with: bytes)
            }
            guard expected else {
                return
                    "the read \(kind) gave \(bytes.count) bytes that are not the next input (remaining \(remaining.count))"
            }
            consumed += bytes.count
            return nil
        }
    }
}
