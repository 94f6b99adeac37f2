import TomorrowlandSimulation

/// A public call on a ``TomorrowlandLoop/TCPConnection``, made by a TCP model program at the top
/// level or from inside a callback.
enum TCPModelOperation: Hashable, CustomStringConvertible {
    case write(Int)
    case enqueue(Int)
    case flush
    case readAvailable(maxBytes: Int)
    case readUpToNewline(maxBytes: Int)
    case readExactly(Int)
    case cancelRead
    case startReading
    case stopReading
    case resumeReading
    case shutdownOutput
    case close
    case closeAfterFlushing
    case queryWritable

    var description: String {
        switch self {
        case .write(let count): "write(\(count) bytes)"
        case .enqueue(let count): "enqueue(\(count) bytes)"
        case .flush: "flush()"
        case .readAvailable(let maxBytes): "read(maxBytes: \(maxBytes))"
        case .readUpToNewline(let maxBytes): "read(upTo: \\n, maxBytes: \(maxBytes))"
        case .readExactly(let count): "read(exactly: \(count))"
        case .cancelRead: "requestCancel() on the pending read"
        case .startReading: "startReading"
        case .stopReading: "stopReading()"
        case .resumeReading: "resumeReading()"
        case .shutdownOutput: "shutdownOutput()"
        case .close: "close()"
        case .closeAfterFlushing: "close(afterFlushing: true)"
        case .queryWritable: "isWritable"
        }
    }

    /// A random call; the closing ones are rare so that programs do something first.
    static func random(streaming: Bool, using generator: inout SimulationRandom) -> TCPModelOperation {
        let roll = Int.random(in: 0..<1000, using: &generator)
        switch roll {
        case 0..<170: return .write(Int.random(in: 1...48, using: &generator))
        case 170..<350: return .enqueue(Int.random(in: 1...48, using: &generator))
        case 350..<430: return .flush
        case 430..<650:
            if streaming {
                return [.startReading, .stopReading, .resumeReading, .resumeReading, .resumeReading, .resumeReading][
                    Int.random(in: 0..<6, using: &generator)]
            }
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return .readAvailable(maxBytes: Int.random(in: 1...64, using: &generator))
            case 1: return .readUpToNewline(maxBytes: Int.random(in: 1...40, using: &generator))
            default: return .readExactly(Int.random(in: 0...40, using: &generator))
            }
        case 650..<710: return streaming ? .queryWritable : .cancelRead
        case 710..<820: return .queryWritable
        case 820..<850: return .shutdownOutput
        case 850..<865: return .close
        case 865..<885: return .closeAfterFlushing
        default: return .write(Int.random(in: 30...80, using: &generator))
        }
    }
}

/// A step of a TCP model program at the top level (outside every callback).
enum TCPModelStep: Hashable, CustomStringConvertible {
    /// A public call.
    case call(TCPModelOperation)
    /// The peer sends that many bytes of its input stream.
    case peerSends(Int)
    /// The peer shuts down its sending side (end of input for the connection).
    case peerEnds
    /// The loop runs until idle; the peer reads what arrived.
    case runLoop

    var description: String {
        switch self {
        case .call(let operation): "\(operation)"
        case .peerSends(let count): "peer sends \(count) bytes"
        case .peerEnds: "peer shuts down its output"
        case .runLoop: "run the loop"
        }
    }
}

/// A TCP model program: its top-level steps; what callbacks call is drawn from a generator
/// seeded with ``seed`` as they run, so the whole run is a function of the seed and the steps.
struct TCPModelProgram {
    let seed: UInt64
    /// Streaming input (``TomorrowlandLoop/TCPConnection/startReading(_:)``) or promise reads.
    let streaming: Bool
    var steps: [TCPModelStep]

    /// The program of `seed`.
    static func generate(seed: UInt64, length: Int) -> TCPModelProgram {
        var generator = SimulationRandom(seed: seed)
        let streaming = Bool.random(using: &generator)
        var steps: [TCPModelStep] = []
        var peerEnded = false
        for index in 0..<length {
            let roll = Int.random(in: 0..<100, using: &generator)
            switch roll {
            case 0..<30 where !peerEnded: steps.append(.peerSends(Int.random(in: 1...40, using: &generator)))
            case 30..<52: steps.append(.runLoop)
            case 52..<60 where !peerEnded && index > length / 2:
                peerEnded = true
                steps.append(.peerEnds)
            default: steps.append(.call(.random(streaming: streaming, using: &generator)))
            }
        }
        // Streaming programs mostly start reading early.
        if streaming && Int.random(in: 0..<4, using: &generator) != 0 {
            steps.insert(.call(.startReading), at: Int.random(in: 0...min(3, steps.count), using: &generator))
        }
        return TCPModelProgram(seed: seed, streaming: streaming, steps: steps)
    }
}
