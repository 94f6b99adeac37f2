extension CommandProcessor {
    /// How ``executeAll(_:parser:into:replyBudget:)`` stopped.
    public enum BatchEnding: Equatable, Sendable {
        /// Every complete request was executed; the rest (if any) is an incomplete request.
        case needsMoreInput
        /// The replies reached the budget; requests remain after `consumed`.
        case overBudget
        /// QUIT: its reply is encoded; close after sending (input after it is ignored).
        case close
        /// Malformed or oversized input: the error reply is encoded; close after sending.
        case protocolError(RESPProtocolError)
    }

    /// Parses and executes every complete request at the front of `input`, appending the replies
    /// to `out`, until the input runs out, the replies reach `replyBudget` bytes, QUIT, or a
    /// protocol error (answered as Redis does: `-ERR Protocol error: <reason>`).
    ///
    /// The parser and the writer are `inout` so that the whole batch runs on them without
    /// per-request exclusivity checks or copies (what a connection's read handler calls).
    ///
    /// - Returns: the bytes consumed from `input` (all of it after QUIT or a protocol error) and
    ///   why it stopped.
    public func executeAll(
        _ input: UnsafeRawBufferPointer, parser: inout RESPParser, into out: inout RESPReplyWriter,
        replyBudget: Int = .max
    ) -> (consumed: Int, ending: BatchEnding) {
        var consumed = 0
        while consumed < input.count {
            if out.bytes.count >= replyBudget { return (consumed, .overBudget) }
            switch parser.parse(UnsafeRawBufferPointer(rebasing: input[consumed...])) {
            case .command(let length):
                consumed += length
                if execute(parser, into: &out) == .close { return (input.count, .close) }
            case .incomplete:
                return (consumed, .needsMoreInput)
            case .failed(let error):
                out.error("ERR Protocol error: \(error.reason)")
                return (input.count, .protocolError(error))
            }
        }
        return (consumed, .needsMoreInput)
    }
}
