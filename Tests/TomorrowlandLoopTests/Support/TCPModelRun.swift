import Tomorrowland
import TomorrowlandSimulation

@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one ``TCPModelProgram`` on a ``TCPConnection`` over a socketpair, the test playing the
/// peer, and checks every answer against ``TCPByteStreamModel``.
///
/// Every callback of the connection (the streaming handler, `onWritable`, `onInputClosed`, the
/// `.immediate` callbacks of write, flush, read and `closed` promises) makes random public calls
/// from inside itself, drawn from a generator seeded with the program's seed.
final class TCPModelRun: @unchecked Sendable {
    // `@unchecked Sendable`: single-threaded. The test thread makes the top-level calls and drives
    // the loop (`runUntilIdle`), so every callback runs on it too.

    /// The kinds of callback that made calls, counted over a whole test run.
    enum CallbackKind: String, CaseIterable {
        case handler, onWritable, onInputClosed, write, flush, read, closed
    }

    let loop: EventLoop
    let program: TCPModelProgram
    private var generator: SimulationRandom
    private var model = TCPByteStreamModel()
    private var connection: TCPConnection!
    private let peer: Int32
    /// The socket the connection owns: closed by the time ``TomorrowlandLoop/TCPConnection/closed``
    /// resolves.
    private let connectionSocket: SocketIdentity
    private var peerReceived: [UInt8] = []
    private var peerSawEnd = false
    /// The calls callbacks may still make: callbacks that call, whose calls call back... end.
    private var callBudget = 40
    private var nextChunkID = 0
    private var pendingRead: Promise<[UInt8], TCPError>?
    private var pendingReadID: Int?
    private var readCancelRequested = false
    private var promisesMade = 0
    private var settlements: [Int: Int] = [:]
    private var lastFulfilledOutputPromise = -1
    private var closedSettlements = 0
    private var inputClosedCalls = 0
    /// The first disagreement with the model.
    private(set) var failure: String?
    /// What happened, when tracing (a failure's report).
    private(set) var trace: [String]?
    private(set) var callbackCalls: [CallbackKind: Int] = [:]

    /// Runs `program` on `loop` (which no thread drives) and returns the run.
    static func run(_ program: TCPModelProgram, on loop: EventLoop, tracing: Bool = false) -> TCPModelRun {
        let run = TCPModelRun(program, loop: loop, tracing: tracing)
        run.execute()
        return run
    }

    private init(_ program: TCPModelProgram, loop: EventLoop, tracing: Bool) {
        self.program = program
        self.loop = loop
        generator = SimulationRandom(seed: program.seed ^ 0x5EED_CA11_BAC4)
        trace = tracing ? [] : nil
        let (fd, peer) = makeSocketPair()
        self.peer = peer
        guard let connectionSocket = SocketIdentity(of: fd) else {
            preconditionFailure("the socketpair's new descriptor is not open")
        }
        self.connectionSocket = connectionSocket
        var options = TCPConnectionOptions()
        // Small, so that output written inside the handler passes it and onWritable follows.
        options.writeHighWaterMark = 32
        let made: TCPConnection? = loop.withConfinedState("TCPModelRun", ifShutDown: nil) {
            TCPConnection(fd: fd, loop: loop, options: options, remote: nil)
        }
        guard let made else { preconditionFailure("TCPModelRun: the loop is shut down") }
        connection = made
    }

    deinit {
        closeDescriptor(peer)
    }

    private func note(_ line: @autoclosure () -> String) {
        if trace != nil { trace!.append(line()) }
    }

    private func fail(_ message: String) {
        note("FAILED: \(message)")
        if failure == nil { failure = message }
    }

    // MARK: The program

    private func execute() {
        let connection = connection!
        if program.streaming {
            connection.onWritable = { [unowned self] in callback(.onWritable) }
            connection.onInputClosed = { [unowned self] in
                inputClosedCalls += 1
                if !model.peerEnded { fail("onInputClosed was called before the peer ended its output") }
                if inputClosedCalls > 1 { fail("onInputClosed was called twice") }
                callback(.onInputClosed)
            }
        }
        connection.closed.tap(on: .immediate) { [self] result in
            closedSettlements += 1
            note("closed resolved with \(String(describing: result))")
            if result.value != .some(nil) { fail("closed resolved with \(String(describing: result))") }
            if model.lifecycle == .open && !model.mayHaveClosedItself { fail("the connection closed by itself") }
            model.observedClosed()
            callback(.closed)
        }
        for step in program.steps {
            note("step: \(step)")
            switch step {
            case .call(let operation): perform(operation)
            case .peerSends(let count): peerSends(count)
            case .peerEnds:
                _ = shutdown(peer, Int32(SHUT_WR))
                model.peerEnd()
            case .runLoop: runLoop()
            }
            if failure != nil { return }
        }
        note("finish: close(afterFlushing: true)")
        model.close(afterFlushing: true)
        connection.close(afterFlushing: true)
        for _ in 0..<50 where closedSettlements == 0 { runLoop() }
        runLoop()
        guard failure == nil else { return }
        checkEnd()
    }

    private func runLoop() {
        loop.runUntilIdle()
        loop.runUntilIdle()
        drainPeer()
    }

    private func peerSends(_ count: Int) {
        // A peer that ended its output sends nothing more (shrinking may put a send there).
        guard !model.peerEnded else { return }
        let bytes = model.peerSent(count)
        let sent = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        // Once the connection closed, the peer's send fails (EPIPE): its bytes are nobody's.
        if sent != count && model.lifecycle == .open && !model.mayHaveClosedItself {
            fail("the peer could not send \(count) bytes: \(sent), errno \(errno)")
        }
    }

    private func drainPeer() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !peerSawEnd {
            let count = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                peerReceived += buffer[..<count]
            } else if count == 0 {
                peerSawEnd = true
            } else {
                break
            }
        }
    }

    private func checkEnd() {
        if closedSettlements != 1 { fail("closed settled \(closedSettlements) times") }
        for id in 0..<promisesMade where settlements[id] != 1 {
            fail("promise \(id) settled \(settlements[id] ?? 0) times")
        }
        if SocketIdentity(of: connection.fd) == connectionSocket {
            fail("the connection's socket is still open after the close")
        } else if !peerSawEnd {
            // Closed, so the end is on its way: only a process being spawned can still hold the
            // socket (see `readUntilEnd`).
            let rest = readUntilEnd(from: peer, within: .seconds(5))
            peerReceived += rest.bytes
            peerSawEnd = rest.ended
        }
        if !peerSawEnd { fail("the peer did not see the end of the stream after the close") }
        let expected = model.expectedPeerBytes
        if peerReceived != expected {
            let common = zip(peerReceived, expected).prefix { $0 == $1 }.count
            fail(
                "the peer received \(peerReceived.count) bytes, the model expects \(expected.count); they differ from byte \(common)"
            )
        }
    }

    // MARK: Calls

    /// A callback of `kind` runs: it makes up to two random calls.
    private func callback(_ kind: CallbackKind) {
        callbackCalls[kind, default: 0] += 1
        let count = Int.random(in: 0...2, using: &generator)
        for _ in 0..<count where callBudget > 0 && failure == nil {
            callBudget -= 1
            let operation = TCPModelOperation.random(streaming: program.streaming, using: &generator)
            note("  in \(kind): \(operation)")
            perform(operation)
        }
    }

    private func makePromiseID() -> Int {
        promisesMade += 1
        return promisesMade - 1
    }

    private func settled(_ id: Int) {
        settlements[id, default: 0] += 1
    }

    private func chunk(_ count: Int) -> [UInt8] {
        nextChunkID += 1
        return (0..<count).map { UInt8(truncatingIfNeeded: nextChunkID &* 37 &+ $0) }
    }

    private func perform(_ operation: TCPModelOperation) {
        let connection = connection!
        switch operation {
        case .write(let count):
            let bytes = chunk(count)
            let index = model.output(bytes)
            let id = makePromiseID()
            let promise = connection.write(bytes)
            let settledInCall = promise.result != nil
            promise.tap(on: .immediate) { [self] result in
                settled(id)
                note("write \(id) settled: \(result)")
                checkOutputSettlement(
                    id, result, chunkCount: index.map { $0 + 1 }, chunk: index, closedAtCall: index == nil,
                    settledInCall: settledInCall)
                callback(.write)
            }
        case .enqueue(let count):
            let bytes = chunk(count)
            _ = model.output(bytes)
            connection.enqueue(bytes)
        case .flush:
            let id = makePromiseID()
            let count = model.chunks.count
            let closedAtCall = model.lifecycle == .closed
            let mayHaveClosed = model.mayHaveClosedItself
            let promise = connection.flush()
            let settledInCall = promise.result != nil
            promise.tap(on: .immediate) { [self] result in
                settled(id)
                note("flush \(id) settled: \(result)")
                if case .error(.closed) = result, mayHaveClosed {
                    // The connection may have closed itself before the call.
                } else {
                    checkOutputSettlement(
                        id, result, chunkCount: count, chunk: nil, closedAtCall: closedAtCall,
                        settledInCall: settledInCall)
                }
                callback(.flush)
            }
        case .readAvailable(let maxBytes):
            read(.available(maxBytes: maxBytes)) { connection.read(maxBytes: maxBytes) }
        case .readUpToNewline(let maxBytes):
            read(.upToNewline(maxBytes: maxBytes)) {
                connection.read(upTo: [TCPByteStreamModel.delimiter], maxBytes: maxBytes)
            }
        case .readExactly(let count):
            read(.exactly(count)) { connection.read(exactly: count) }
        case .cancelRead:
            guard let pendingRead else { return }
            readCancelRequested = true
            pendingRead.requestCancel()
        case .startReading:
            guard program.streaming, !model.hasHandler, model.lifecycle == .open else { return }
            model.startReading()
            connection.startReading { [unowned self] buffer in handle(Array(buffer)) }
        case .stopReading:
            model.stopReading()
            connection.stopReading()
        case .resumeReading:
            model.resumeReading()
            connection.resumeReading()
        case .shutdownOutput:
            model.shutdownOutput()
            connection.shutdownOutput()
        case .close:
            model.close(afterFlushing: false)
            connection.close()
        case .closeAfterFlushing:
            model.close(afterFlushing: true)
            connection.close(afterFlushing: true)
        case .queryWritable:
            _ = connection.isWritable
        }
    }

    /// Checks a write's or flush's outcome: fulfilled once the bytes before it were sent, in call
    /// order; rejected with `closed` when the connection was closed or dropped them.
    ///
    /// `settledInCall`: the promise settled inside the call that made it (a call outside every
    /// callback runs the callbacks it causes before it returns), so this callback, attached
    /// afterwards, ran after those: its position says nothing about the order.
    private func checkOutputSettlement(
        _ id: Int, _ result: PromiseResult<Void, TCPError>, chunkCount: Int?, chunk: Int?, closedAtCall: Bool,
        settledInCall: Bool
    ) {
        switch result {
        case .value:
            if closedAtCall { fail("promise \(id) was fulfilled although the connection did not take it") }
            if let chunkCount, !model.allSent(before: chunkCount) {
                fail("promise \(id) was fulfilled before the bytes before it were sent")
            }
            if settledInCall { return }
            if id < lastFulfilledOutputPromise {
                fail("promise \(id) was fulfilled after \(lastFulfilledOutputPromise)")
            }
            lastFulfilledOutputPromise = id
        case .error(.closed):
            if closedAtCall { return }
            if let chunk, model.chunkState(chunk) != .dropped {
                fail("write \(id) was rejected although its bytes were \(model.chunkState(chunk))")
            }
            if chunk == nil, let chunkCount, !model.anyDropped(before: chunkCount) {
                fail("flush \(id) was rejected although nothing before it was dropped")
            }
        case .error(let error):
            fail("promise \(id) was rejected with \(error)")
        case .cancelled:
            fail("promise \(id) was cancelled")
        }
    }

    private func read(_ kind: TCPByteStreamModel.ReadKind, _ start: () -> Promise<[UInt8], TCPError>) {
        guard !program.streaming, pendingRead == nil else { return }
        let id = makePromiseID()
        let openAtCall = model.lifecycle == .open
        let mayHaveClosed = model.mayHaveClosedItself
        readCancelRequested = false
        let promise = start()
        pendingRead = promise
        pendingReadID = id
        promise.tap(on: .immediate) { [self] result in
            settled(id)
            note("read \(id) settled: \(result)")
            if pendingReadID == id {
                pendingRead = nil
                pendingReadID = nil
            }
            let outcome: Result<[UInt8], TCPError>? =
                switch result {
                case .value(let bytes): .success(bytes)
                case .error(let error): .failure(error)
                case .cancelled: nil
                }
            if let problem = model.checkRead(
                kind, outcome, cancelRequested: readCancelRequested, openAtCall: openAtCall,
                mayHaveClosedAtCall: mayHaveClosed)
            {
                fail("read \(id): \(problem)")
            }
            callback(.read)
        }
    }

    private func handle(_ buffer: [UInt8]) -> Int {
        if let problem = model.checkHandlerInput(buffer) { fail(problem) }
        model.handlerCalled()
        let consumed: Int
        switch Int.random(in: 0..<8, using: &generator) {
        case 0: consumed = 0
        case 1..<5: consumed = buffer.count
        default: consumed = Int.random(in: 0...buffer.count, using: &generator)
        }
        note("handler given \(buffer.count) bytes, consumes \(consumed)")
        model.consume(consumed)
        callback(.handler)
        model.handlerReturned()
        return consumed
    }
}
