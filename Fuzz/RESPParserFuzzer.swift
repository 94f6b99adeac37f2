// libFuzzer harness for RESPParser (compiled by scripts/fuzz.sh together with the parser's
// sources alone: swiftc -sanitize=fuzzer,address).
//
// Each input is parsed twice: whole, and delivered in chunks whose sizes come from the input's
// first byte, the way a connection delivers reads. Both must produce the same requests and the
// same outcome, every view must lie inside the input, and every step must make progress.

/// One parse of `data`: the requests (arguments copied) and how it ended.
private func parseAll(_ data: [UInt8], chunk: Int) -> (requests: [[[UInt8]]], end: String) {
    var parser = RESPParser(maxRequestBytes: 4096)
    var requests: [[[UInt8]]] = []
    var start = 0
    var available = min(data.count, chunk)
    while true {
        let step = data.withUnsafeBytes { raw -> RESPParser.Step in
            let view = UnsafeRawBufferPointer(rebasing: raw[start..<available])
            let step = parser.parse(view)
            if case .command(let consumed) = step {
                precondition(consumed > 0 && consumed <= view.count, "consumed out of range")
                var request: [[UInt8]] = []
                for index in 0..<parser.argumentCount {
                    let argument = parser.argument(index)
                    request.append(Array(argument))
                }
                requests.append(request)
            }
            return step
        }
        switch step {
        case .command(let consumed):
            start += consumed
        case .incomplete:
            if available == data.count { return (requests, "incomplete") }
            available = min(data.count, available + chunk)
        case .failed(let error):
            return (requests, "failed \(error.reason)")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESPParser(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let chunk = Int(start[0] % 16) + 1
    let data = Array(UnsafeBufferPointer(start: start + 1, count: count - 1))
    let whole = parseAll(data, chunk: max(data.count, 1))
    let pieces = parseAll(data, chunk: chunk)
    precondition(whole.requests == pieces.requests, "chunked parse gave other requests")
    precondition(whole.end == pieces.end, "chunked parse ended otherwise: \(whole.end) vs \(pieces.end)")
    return 0
}
